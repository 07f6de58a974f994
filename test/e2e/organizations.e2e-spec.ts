import { createLocalJWKSet, jwtVerify } from 'jose';
import { ADMIN_ENV, adminApi, createUser, SignedIn, storedEvents, superAdmin } from '../support/admin-flows';
import { login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { createOrganization, mailedToken, orgApi, verifyAddress } from '../support/organizations';
import { createTestApp, TestApp } from '../support/test-app';
import { OrganizationMemberRepository } from '../../src/application/ports/organization-member.repository';

jest.setTimeout(120_000);

const AT = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
const UUID = expect.stringMatching(/^[0-9a-f-]{36}$/);

async function signIn(t: TestApp, email: string): Promise<string> {
  const res = await login(t, email, PASSWORD);
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.tokens.accessToken as string;
}

describe('Organizations: administration, invitations, members', () => {
  let t: TestApp;
  let root: SignedIn;
  let admin: ReturnType<typeof adminApi>;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    root = await superAdmin(t);
    admin = adminApi(t, root.accessToken, 'default');
    expect((await admin.post('/roles').send({ name: 'billing' })).status).toBe(201);
  });
  afterAll(() => t?.close());

  it('creates, reads, lists, changes and deletes an organization; slugs and domains are unique in the realm', async () => {
    const created = await admin.post('/organizations').send({ name: 'Acme', slug: 'acme-crud', domains: ['acme-crud.example'] });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      organization: {
        id: UUID,
        name: 'Acme',
        slug: 'acme-crud',
        domains: ['acme-crud.example'],
        identityProvider: null,
        requireIdentityProvider: false,
        memberCount: 0,
        createdAt: AT,
        updatedAt: AT,
      },
    });
    const id = created.body.organization.id;
    expect((await admin.post('/organizations').send({ name: 'Other', slug: 'acme-crud' })).body.error.code).toBe('ORGANIZATION_EXISTS');
    const sameDomain = await admin.post('/organizations').send({ name: 'Other', slug: 'other-crud', domains: ['acme-crud.example'] });
    expect([sameDomain.status, sameDomain.body.error.code]).toEqual([409, 'ORGANIZATION_EXISTS']);
    expect((await admin.post('/organizations').send({ name: 'Bad', slug: 'Bad Slug' })).status).toBe(400);
    expect((await admin.post('/organizations').send({ name: 'X', slug: 'x-crud', requireIdentityProvider: true })).status).toBe(400);
    expect((await admin.post('/organizations').send({ name: 'X', slug: 'x-crud', identityProvider: 'nope' })).status).toBe(400);
    expect((await admin.post('/organizations').send({ name: 'X', slug: 'x-crud', extra: 1 })).status).toBe(400);

    expect((await admin.get(`/organizations/${id}`)).body.organization.slug).toBe('acme-crud');
    const listed = await admin.get('/organizations?search=ACME-CR');
    expect(listed.body.pagination).toEqual({ total: 1, page: 1, limit: 20 });
    expect(listed.body.organizations.map((o: { id: string }) => o.id)).toEqual([id]);

    const patched = await admin.patch(`/organizations/${id}`).send({ name: 'Acme Inc', domains: ['acme-crud.example', 'acme-crud.test'] });
    expect(patched.status).toBe(200);
    expect(patched.body.organization).toMatchObject({ name: 'Acme Inc', domains: ['acme-crud.example', 'acme-crud.test'] });
    expect((await admin.delete(`/organizations/${id}`).send({})).body).toEqual({ success: true });
    const gone = await admin.get(`/organizations/${id}`);
    expect([gone.status, gone.body.error.code]).toEqual([404, 'ORGANIZATION_NOT_FOUND']);
    expect((await storedEvents(t, 'default', { type: 'organization.deleted' })).length).toBe(1);
    const events = (await storedEvents(t, 'default')).filter((e) => e.type.startsWith('organization.')).map((e) => [e.type, e.actor_id]);
    expect(events).toEqual([
      ['organization.created', root.id],
      ['organization.updated', root.id],
      ['organization.deleted', root.id],
    ]);
  });

  it('create → invite → the invitee registers with the invited address, verifies, accepts → a member with the roles', async () => {
    const orgId = await createOrganization(t, root.accessToken, 'default', { name: 'Globex', slug: 'globex' });
    const email = uniqueEmail('invitee');
    const invited = await admin
      .post(`/organizations/${orgId}/invitations`)
      .send({ email: email.toUpperCase(), roles: ['billing', 'org-admin'] });
    expect(invited.status).toBe(201);
    expect(invited.body).toEqual({
      invitation: {
        id: UUID,
        email,
        roles: ['billing', 'org-admin'],
        status: 'pending',
        invitedBy: root.id,
        expiresAt: AT,
        createdAt: AT,
      },
    });
    const token = await mailedToken(t, email, '/account/invitation');
    const stored: { token_hash: string }[] = await t.dataSource.query(`SELECT token_hash FROM organization_invitations WHERE id = $1`, [
      invited.body.invitation.id,
    ]);
    expect(stored[0].token_hash).not.toContain(token);
    expect((await admin.get(`/organizations/${orgId}/invitations`)).body.invitations.map((i: { id: string }) => i.id)).toEqual([
      invited.body.invitation.id,
    ]);

    await register(t, email);
    let access = await signIn(t, email);
    const unverified = await orgApi(t, access).post('/invitations/accept').send({ token });
    expect([unverified.status, unverified.body.error.code]).toEqual([403, 'FORBIDDEN']);

    await verifyAddress(t, email);
    access = await signIn(t, email);
    const accepted = await orgApi(t, access).post('/invitations/accept').send({ token });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ organization: { id: orgId, name: 'Globex', slug: 'globex', roles: ['billing', 'org-admin'] } });

    const again = await orgApi(t, access).post('/invitations/accept').send({ token });
    expect([again.status, again.body.error.code]).toEqual([400, 'INVALID_VERIFICATION_TOKEN']);
    expect((await orgApi(t, access).get('')).body).toEqual({
      organizations: [{ id: orgId, name: 'Globex', slug: 'globex', roles: ['billing', 'org-admin'] }],
    });
    const members = await admin.get(`/organizations/${orgId}/members`);
    expect(members.body).toEqual({
      members: [{ userId: expect.any(String), email, roles: ['billing', 'org-admin'], joinedAt: AT }],
      pagination: { total: 1, page: 1, limit: 20 },
    });
    expect((await admin.get(`/organizations/${orgId}`)).body.organization.memberCount).toBe(1);
    expect((await admin.get(`/organizations/${orgId}/invitations`)).body.invitations).toEqual([]);
    const types = (await storedEvents(t, 'default', { userId: members.body.members[0].userId })).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['organization.member_added', 'organization.invitation_accepted']));
    // The user resource lists no organizations.
    expect(Object.keys((await t.api().get('/api/v1/auth/me').set('Authorization', `Bearer ${access}`)).body.user)).not.toContain(
      'organizations',
    );
  });

  it('refuses another user with the token, and a revoked, replaced or expired invitation', async () => {
    const orgId = await createOrganization(t, root.accessToken, 'default', { name: 'Initech', slug: 'initech' });
    const other = await createUser(t, root.accessToken, 'default', { emailVerified: true });
    const invite = async (email: string) => {
      const res = await admin.post(`/organizations/${orgId}/invitations`).send({ email, roles: [] });
      expect(res.status).toBe(201);
      return { id: res.body.invitation.id as string, token: await mailedToken(t, email, '/account/invitation') };
    };
    const accept = (token: string, access = other.accessToken) => orgApi(t, access).post('/invitations/accept').send({ token });
    const outcome = async (res: { status: number; body: { error?: { code: string } } }) => [res.status, res.body.error?.code];

    const forSomeoneElse = await invite(uniqueEmail('someone'));
    expect(await outcome(await accept(forSomeoneElse.token))).toEqual([403, 'FORBIDDEN']);

    const revoked = await invite(other.email);
    expect((await admin.delete(`/organizations/${orgId}/invitations/${revoked.id}`).send({})).body).toEqual({ success: true });
    expect(await outcome(await accept(revoked.token))).toEqual([400, 'INVALID_VERIFICATION_TOKEN']);
    expect((await admin.delete(`/organizations/${orgId}/invitations/${revoked.id}`).send({})).status).toBe(404);

    const replaced = await invite(other.email);
    const newer = await invite(other.email);
    expect(await outcome(await accept(replaced.token))).toEqual([400, 'INVALID_VERIFICATION_TOKEN']);

    t.clock.advance(7 * 24 * 3600 + 1);
    root = await superAdmin(t);
    admin = adminApi(t, root.accessToken, 'default');
    const fresh = await signIn(t, other.email);
    expect(await outcome(await accept(newer.token, fresh))).toEqual([400, 'INVALID_VERIFICATION_TOKEN']);
    expect(await outcome(await accept('not a token', fresh))).toEqual([400, 'INVALID_VERIFICATION_TOKEN']);
    const current = await invite(other.email);
    expect((await accept(current.token, fresh)).status).toBe(200);
  });

  it('adds a user of the realm with organization roles only; unknown users and organizations are 404', async () => {
    const orgId = await createOrganization(t, root.accessToken, 'default', { name: 'Hooli', slug: 'hooli' });
    const user = await createUser(t, root.accessToken, 'default');
    const put = (userId: string, roles: string[]) => admin.put(`/organizations/${orgId}/members/${userId}`).send({ roles });
    const added = await put(user.id, ['org-admin']);
    expect(added.body).toEqual({ member: { userId: user.id, email: user.email, roles: ['org-admin'], joinedAt: AT } });
    expect((await put(user.id, ['realm-admin'])).status).toBe(400);
    expect((await put(user.id, ['nonexistent'])).status).toBe(400);
    expect((await put(user.id, ['billing'])).body.member.roles).toEqual(['billing']);
    expect((await put('00000000-0000-4000-8000-000000000000', [])).body.error.code).toBe('USER_NOT_FOUND');
    const unknownOrg = await admin.put(`/organizations/00000000-0000-4000-8000-000000000000/members/${user.id}`).send({ roles: [] });
    expect(unknownOrg.body.error.code).toBe('ORGANIZATION_NOT_FOUND');
    // A realm role deleted leaves the memberships too.
    expect((await admin.delete('/roles/billing').send({})).status).toBe(200);
    expect((await admin.get(`/organizations/${orgId}/members`)).body.members[0].roles).toEqual([]);
    expect((await admin.post('/roles').send({ name: 'billing' })).status).toBe(201);
    expect((await admin.delete(`/organizations/${orgId}/members/${user.id}`).send({})).body).toEqual({ success: true });
    expect((await admin.get(`/organizations/${orgId}`)).body.organization.memberCount).toBe(0);
    expect((await admin.delete(`/organizations/${orgId}/members/${user.id}`).send({})).body.error.code).toBe('USER_NOT_FOUND');
  });
});

describe('Organizations: the active organization and the org claim', () => {
  let t: TestApp;
  let root: SignedIn;

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    root = await superAdmin(t);
    expect((await adminApi(t, root.accessToken, 'default').post('/roles').send({ name: 'billing' })).status).toBe(201);
  });
  afterAll(() => t?.close());

  /** The access token's claims, verified with jose against the realm's JWKS and issuer, as a resource server would. */
  async function verified(token: string) {
    const jwks = createLocalJWKSet((await t.api().get('/.well-known/jwks.json')).body);
    const { payload } = await jwtVerify(token, jwks, { issuer: `${t.config.issuer}/realms/default`, typ: 'at+jwt' });
    return payload;
  }

  it('carries org {id, slug, roles} once chosen, in the same session’s refreshes with the current roles, and never after leaving', async () => {
    const admin = adminApi(t, root.accessToken, 'default');
    const orgId = await createOrganization(t, root.accessToken, 'default', { name: 'Umbrella', slug: 'umbrella' });
    const user = await createUser(t, root.accessToken, 'default', { emailVerified: true });
    expect((await admin.put(`/organizations/${orgId}/members/${user.id}`).send({ roles: ['billing'] })).status).toBe(200);
    expect((await verified(user.accessToken)).org).toBeUndefined();

    const chosen = await orgApi(t, user.accessToken).post('/active').send({ organizationId: orgId });
    expect(chosen.status).toBe(200);
    expect(Object.keys(chosen.body.tokens).sort()).toEqual(['accessToken', 'expiresIn', 'tokenType']);
    const claims = await verified(chosen.body.tokens.accessToken);
    expect(claims.org).toEqual({ id: orgId, slug: 'umbrella', roles: ['billing'] });
    expect(claims.sid).toBe((await verified(user.accessToken)).sid);

    // The session remembers it: its refresh carries it, with the membership's roles of now.
    expect((await admin.put(`/organizations/${orgId}/members/${user.id}`).send({ roles: ['billing', 'org-admin'] })).status).toBe(200);
    const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: user.refreshToken });
    expect(refreshed.status).toBe(200);
    expect((await verified(refreshed.body.tokens.accessToken)).org).toEqual({
      id: orgId,
      slug: 'umbrella',
      roles: ['billing', 'org-admin'],
    });
    // A new sign-in is a new session: no organization until one is chosen.
    const again = await login(t, user.email);
    expect((await verified(again.body.tokens.accessToken)).org).toBeUndefined();

    // Removed from the organization: the next refresh has no org claim.
    expect((await admin.delete(`/organizations/${orgId}/members/${user.id}`).send({})).status).toBe(200);
    const afterRemoval = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: refreshed.body.tokens.refreshToken });
    expect((await verified(afterRemoval.body.tokens.accessToken)).org).toBeUndefined();
    // And it cannot be chosen again.
    const refused = await orgApi(t, afterRemoval.body.tokens.accessToken).post('/active').send({ organizationId: orgId });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('reads memberships only for a session with an active organization: none at login or at refresh without one', async () => {
    const admin = adminApi(t, root.accessToken, 'default');
    const orgId = await createOrganization(t, root.accessToken, 'default', { name: 'Hot Path', slug: 'hot-path' });
    const user = await createUser(t, root.accessToken, 'default');
    await admin.put(`/organizations/${orgId}/members/${user.id}`).send({ roles: [] });
    const claim = jest.spyOn(t.app.get(OrganizationMemberRepository), 'claim');
    try {
      const signedIn = await login(t, user.email);
      const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: signedIn.body.tokens.refreshToken });
      expect(refreshed.status).toBe(200);
      expect(claim).not.toHaveBeenCalled();
      await orgApi(t, refreshed.body.tokens.accessToken).post('/active').send({ organizationId: orgId });
      claim.mockClear();
      await t.api().post('/api/v1/auth/refresh').send({ refreshToken: refreshed.body.tokens.refreshToken });
      expect(claim).toHaveBeenCalledTimes(1);
    } finally {
      claim.mockRestore();
    }
  });

  it('refuses an organization the caller does not belong to, and null clears the claim', async () => {
    const admin = adminApi(t, root.accessToken, 'default');
    const orgId = await createOrganization(t, root.accessToken, 'default', { name: 'Soylent', slug: 'soylent' });
    const member = await createUser(t, root.accessToken, 'default');
    const stranger = await createUser(t, root.accessToken, 'default');
    await admin.put(`/organizations/${orgId}/members/${member.id}`).send({ roles: [] });
    for (const organizationId of [orgId, '00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const res = await orgApi(t, stranger.accessToken).post('/active').send({ organizationId });
      expect([res.status, res.body.error.code]).toEqual([403, 'FORBIDDEN']);
    }
    expect((await orgApi(t, stranger.accessToken).post('/active').send({})).status).toBe(400);
    const chosen = await orgApi(t, member.accessToken).post('/active').send({ organizationId: orgId });
    expect((await verified(chosen.body.tokens.accessToken)).org).toEqual({ id: orgId, slug: 'soylent', roles: [] });
    const cleared = await orgApi(t, member.accessToken).post('/active').send({ organizationId: null });
    expect((await verified(cleared.body.tokens.accessToken)).org).toBeUndefined();
    const refreshed = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: member.refreshToken });
    expect((await verified(refreshed.body.tokens.accessToken)).org).toBeUndefined();
    // Deleting the organization ends the claim too.
    await orgApi(t, member.accessToken).post('/active').send({ organizationId: orgId });
    expect((await admin.delete(`/organizations/${orgId}`).send({})).status).toBe(200);
    const afterDelete = await t.api().post('/api/v1/auth/refresh').send({ refreshToken: refreshed.body.tokens.refreshToken });
    expect((await verified(afterDelete.body.tokens.accessToken)).org).toBeUndefined();
  });
});

describe('Organizations: accepting invitations is rate limited per user', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('answers 429 with Retry-After after the limit, counted per user, whatever the token', async () => {
    t = await createTestApp({ env: { ...ADMIN_ENV, RATE_LIMIT_INVITATION_ACCEPT: '3/60' } });
    const root = await superAdmin(t);
    const user = await createUser(t, root.accessToken, 'default', { emailVerified: true });
    const other = await createUser(t, root.accessToken, 'default', { emailVerified: true });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1)
      statuses.push(
        (
          await orgApi(t, user.accessToken)
            .post('/invitations/accept')
            .send({ token: `guess-${i}` })
        ).status,
      );
    expect(statuses).toEqual([400, 400, 400, 429]);
    const limited = await orgApi(t, user.accessToken).post('/invitations/accept').send({ token: 'guess' });
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect((await orgApi(t, other.accessToken).post('/invitations/accept').send({ token: 'guess' })).status).toBe(400);
  });
});
