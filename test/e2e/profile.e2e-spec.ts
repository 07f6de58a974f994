import { storedEvents } from '../support/admin-flows';
import { bearer, PASSWORD, signedInUser, uniqueEmail } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

/** PATCH /api/v1/auth/me: a user changes their own name and avatar. */
describe('PATCH /me: the user edits their own profile', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const patchMe = (token: string, body: unknown) =>
    t
      .api()
      .patch('/api/v1/auth/me')
      .set(...bearer(token))
      .send(body as object);
  const profileOf = async (token: string) =>
    (
      await t
        .api()
        .get('/api/v1/auth/me')
        .set(...bearer(token))
    ).body.user.profile;

  it('trims the names, keeps omitted fields, answers the User and records user.profile_updated with the fields', async () => {
    const user = await signedInUser(t);
    const res = await patchMe(user.accessToken, { firstName: '  Ada ', lastName: '\tLovelace  ' });
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({
      id: user.id,
      email: user.email,
      profile: { firstName: 'Ada', lastName: 'Lovelace', avatar: null },
    });
    expect(res.body.user.mfa).toEqual({ enabled: false, methods: [] });
    expect(await profileOf(user.accessToken)).toEqual({ firstName: 'Ada', lastName: 'Lovelace', avatar: null });

    const avatar = await patchMe(user.accessToken, { avatar: 'https://images.example.com/ada.png' });
    expect(avatar.body.user.profile).toEqual({ firstName: 'Ada', lastName: 'Lovelace', avatar: 'https://images.example.com/ada.png' });

    const events = await storedEvents(t, 'default', { userId: user.id, type: 'user.profile_updated' });
    expect(events.map((e) => e.details)).toEqual([{ fields: ['firstName', 'lastName'] }, { fields: ['avatar'] }]);
    expect(events.every((e) => e.session_id !== null)).toBe(true);
    // The audit names the fields, never the values.
    expect(JSON.stringify(events)).not.toContain('Lovelace');
  });

  it('writes nothing for a request that changes nothing (the same values, or an empty body)', async () => {
    const user = await signedInUser(t);
    const same = await patchMe(user.accessToken, { firstName: 'Test', lastName: ' User ' });
    expect(same.status).toBe(200);
    expect((await patchMe(user.accessToken, {})).status).toBe(200);
    expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.profile_updated' })).toEqual([]);
  });

  it('takes names of 0 to 100 characters after trimming, one of them not empty, without control characters', async () => {
    const user = await signedInUser(t);
    const longest = 'é'.repeat(100);
    expect((await patchMe(user.accessToken, { firstName: `  ${longest}  `, lastName: '' })).body.user.profile).toMatchObject({
      firstName: longest,
      lastName: '',
    });
    const refusals: [unknown, string, string][] = [
      [{ firstName: 'x'.repeat(101) }, 'firstName', 'must be at most 100 characters'],
      [{ lastName: 'y'.repeat(101) }, 'lastName', 'must be at most 100 characters'],
      [{ firstName: '   ' }, 'firstName', 'firstName and lastName must not both be empty'],
      [{ firstName: '', lastName: '' }, 'firstName', 'firstName and lastName must not both be empty'],
      [{ firstName: 'Ada\u0007' }, 'firstName', 'must not contain control characters'],
      [{ lastName: 'Love\nlace' }, 'lastName', 'must not contain control characters'],
    ];
    for (const [body, field, message] of refusals) {
      const res = await patchMe(user.accessToken, body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({
        body,
        status: 400,
        error: { code: 'VALIDATION_FAILED', status: 400, message: `${field} ${message}`, details: [{ field, message }] },
      });
    }
    expect(await profileOf(user.accessToken)).toEqual({ firstName: longest, lastName: '', avatar: null });
  });

  it('counts a name in code points at registration and in PATCH /me: 100 emoji are accepted, 101 refused', async () => {
    const emoji = (n: number) => '🦉'.repeat(n);
    const registerNamed = (name: string) => t.api().post('/api/v1/auth/register').send({ email: uniqueEmail(), password: PASSWORD, name });
    expect((await registerNamed(emoji(100))).status).toBe(201);
    const refused = await registerNamed(emoji(101));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'name', message: 'must be 1 to 100 characters' }],
    });

    const user = await signedInUser(t);
    expect((await patchMe(user.accessToken, { firstName: emoji(100) })).body.user.profile.firstName).toBe(emoji(100));
    const tooLong = await patchMe(user.accessToken, { lastName: emoji(101) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: 'lastName', message: 'must be at most 100 characters' }],
    });
  });

  it('takes an https avatar URL or null, and refuses anything else', async () => {
    const user = await signedInUser(t);
    expect((await patchMe(user.accessToken, { avatar: ' https://cdn.example.com/a.png?s=64 ' })).body.user.profile.avatar).toBe(
      'https://cdn.example.com/a.png?s=64',
    );
    for (const avatar of [
      'http://cdn.example.com/a.png',
      'javascript:alert(1)',
      'data:image/png;base64,AAAA',
      '/relative.png',
      'https://user:secret@cdn.example.com/a.png',
      `https://cdn.example.com/${'a'.repeat(2048)}`,
      '',
    ]) {
      const res = await patchMe(user.accessToken, { avatar });
      expect({ avatar, status: res.status, code: res.body.error?.code, field: res.body.error?.details?.[0]?.field }).toEqual({
        avatar,
        status: 400,
        code: 'VALIDATION_FAILED',
        field: 'avatar',
      });
    }
    expect((await profileOf(user.accessToken)).avatar).toBe('https://cdn.example.com/a.png?s=64');
    expect((await patchMe(user.accessToken, { avatar: null })).body.user.profile.avatar).toBeNull();
  });

  it('refuses unknown fields and wrong types, changing nothing', async () => {
    const user = await signedInUser(t);
    for (const body of [
      { firstName: 'Eve', email: 'eve@example.com' },
      { firstName: 'Eve', roles: ['realm-admin'] },
      { profile: { firstName: 'Eve' } },
      { firstName: 5 },
      { firstName: null },
      { lastName: ['a'] },
      { avatar: 42 },
    ]) {
      const res = await patchMe(user.accessToken, body);
      expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: 'VALIDATION_FAILED' });
    }
    const me = await t
      .api()
      .get('/api/v1/auth/me')
      .set(...bearer(user.accessToken));
    expect(me.body.user).toMatchObject({ email: user.email, roles: [], profile: { firstName: 'Test', lastName: 'User', avatar: null } });
    expect(await storedEvents(t, 'default', { userId: user.id, type: 'user.profile_updated' })).toEqual([]);
  });

  it('needs an access token, and a JSON body', async () => {
    expect((await t.api().patch('/api/v1/auth/me').send({ firstName: 'Mallory' })).status).toBe(401);
    const user = await signedInUser(t);
    const text = await t
      .api()
      .patch('/api/v1/auth/me')
      .set(...bearer(user.accessToken))
      .set('Content-Type', 'text/plain')
      .send('firstName=Mallory');
    expect(text.status).toBe(415);
  });

  it('keeps both of two edits made at once to different fields', async () => {
    const user = await signedInUser(t);
    const [a, b] = await Promise.all([
      patchMe(user.accessToken, { firstName: 'Grace' }),
      patchMe(user.accessToken, { avatar: 'https://images.example.com/grace.png' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await profileOf(user.accessToken)).toEqual({
      firstName: 'Grace',
      lastName: 'User',
      avatar: 'https://images.example.com/grace.png',
    });
  });
});
