import { ChangePasswordUseCase } from '../../src/application/auth/change-password.use-case';
import { UpdateProfileUseCase } from '../../src/application/auth/update-profile.use-case';
import { LinkIdentityUseCase } from '../../src/application/federation/link-identity.use-case';
import { RealmDirectory } from '../../src/application/realm/realm-directory';
import { storedEvents } from '../support/admin-flows';
import { dpopKey } from '../support/dpop';
import { decodeJwt } from '../support/mfa';
import { FederationHarness, pkce, providerAccount } from '../support/federation';
import { bearer, login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';
import { TestApp } from '../support/test-app';

/**
 * A squatter — someone who registered another person's address first — keeps no way back in
 * (SECURITY.md FED-06), and a link to an identity provider is bound to the browser and the user
 * that started it (FED-07). Black-box against the running service and a real OpenID provider
 * (oidc-provider in its own process, driven through its own pages). The verification page that
 * asks before it sends anything is driven in Chromium: test/browser/verification-page.browser-spec.ts.
 */

jest.setTimeout(180_000);

const AUTH = '/api/v1/auth';
const ALIAS = 'corp';
/** How many times each race runs. */
const RACES = 8;

describe('FED-06, FED-07: no way back in for a squatter; links bound to their browser', () => {
  let h: FederationHarness;
  let t: TestApp;
  /** Provider accounts: `victim<n>` vouch for their address; `squat<n>` give the same addresses unverified. */
  const accounts: Record<string, ReturnType<typeof providerAccount>> = {};

  beforeAll(async () => {
    for (const name of ['victim', 'linker', 'linkvictim', 'other', 'late', 'latelink']) accounts[name] = providerAccount(name);
    accounts.lateSquat = { ...accounts.late, email_verified: false };
    for (let i = 0; i < RACES; i += 1) {
      accounts[`mallory${i}`] = providerAccount(`mallory${i}`);
      accounts[`owner${i}`] = providerAccount(`owner${i}`);
      accounts[`squat${i}`] = { ...accounts[`owner${i}`], email_verified: false };
    }
    h = await FederationHarness.start({ accounts });
    t = h.t;
  });
  afterAll(() => h?.stop());

  const me = (accessToken: string) =>
    t
      .api()
      .get(`${AUTH}/me`)
      .set(...bearer(accessToken));
  const refresh = (refreshToken: string) => t.api().post(`${AUTH}/refresh`).send({ refreshToken });

  /** The token of the newest verification link sent to `email`. */
  async function verificationToken(email: string): Promise<string> {
    const rows: { text_body: string }[] = await t.dataSource.query(
      `SELECT text_body FROM email_outbox WHERE recipient = $1 AND text_body LIKE '%/verify-email?token=%' ORDER BY created_at DESC, id DESC LIMIT 1`,
      [email.toLowerCase()],
    );
    const match = /\/verify-email\?token=([A-Za-z0-9_-]+)/.exec(rows[0]?.text_body ?? '');
    if (!match) throw new Error(`no verification link for ${email}`);
    return match[1];
  }

  const verifyEmail = (body: Record<string, unknown>) => t.api().post(`${AUTH}/verify-email`).send(body);

  /**
   * The squatter registers `email` with a password, names the profile, and keeps two sessions: a
   * plain one and a DPoP-bound one.
   */
  async function squat(email: string) {
    const user = await register(t, email);
    const plain = (await login(t, email)).body.tokens;
    const key = await dpopKey(t);
    const bound = await t
      .api()
      .post(`${AUTH}/login`)
      .set('DPoP', await key.proof('POST', `${AUTH}/login`))
      .send({ email, password: PASSWORD });
    expect(bound.status).toBe(200);
    const profile = await me(plain.accessToken)
      .then(() =>
        t
          .api()
          .patch(`${AUTH}/me`)
          .set(...bearer(plain.accessToken))
          .send({ firstName: 'Mallory', lastName: 'Squatter', avatar: 'https://evil.example/mallory.png' }),
      )
      .then((res) => res.body.user.profile);
    expect(profile).toEqual({ firstName: 'Mallory', lastName: 'Squatter', avatar: 'https://evil.example/mallory.png' });
    return { ...user, plain, bound: bound.body.tokens, key };
  }

  /** Every way back the squatter kept: password, refresh tokens (plain and DPoP-bound), access tokens. */
  async function expectLockedOut(squatter: Awaited<ReturnType<typeof squat>>) {
    expect((await login(t, squatter.email)).body.error.code).toBe('INVALID_CREDENTIALS');
    expect((await refresh(squatter.plain.refreshToken)).body.error.code).toBe('INVALID_TOKEN');
    const boundRefresh = await t
      .api()
      .post(`${AUTH}/refresh`)
      .set('DPoP', await squatter.key.proof('POST', `${AUTH}/refresh`))
      .send({ refreshToken: squatter.bound.refreshToken });
    expect([boundRefresh.status, boundRefresh.body.error?.code]).toEqual([401, 'INVALID_TOKEN']);
    expect((await me(squatter.plain.accessToken)).status).toBe(401);
    const boundMe = await t
      .api()
      .get(`${AUTH}/me`)
      .set('Authorization', `DPoP ${squatter.bound.accessToken}`)
      .set('DPoP', await squatter.key.proof('GET', `${AUTH}/me`, squatter.bound.accessToken));
    expect(boundMe.status).toBe(401);
  }

  it('FED-06 the owner answers "I didn’t create this account" (notMe): the squatter’s password, sessions and profile are gone; audited', async () => {
    const squatter = await squat(accounts.victim.email);
    // The verification link went to the owner's mailbox. Opening it posts nothing (the page asks);
    // the owner answers no.
    const token = await verificationToken(squatter.email);
    const res = await verifyEmail({ token, notMe: true });
    expect([res.status, res.body]).toEqual([200, { success: true }]);

    await expectLockedOut(squatter);
    // The owner now signs in with the provider (which vouches for the address): the account, verified, with nothing of the squatter's.
    const owner = await h.signIn('victim');
    expect(owner.status).toBe(200);
    expect(owner.body.user).toMatchObject({ id: squatter.id, emailVerified: true });
    const account = (await me(owner.body.tokens.accessToken)).body.user;
    expect(account).toMatchObject({ hasPassword: false, mfa: { enabled: false } });
    // The provider's profile replaced nothing here (the takeover cleared it; linking a verified account keeps what is there).
    expect(account.profile).toEqual({ firstName: accounts.victim.email.split('@')[0], lastName: '', avatar: null });

    const events = await storedEvents(t, 'default', { userId: squatter.id, type: 'email.verified' });
    expect(events.find((e) => e.details.takeover)?.details).toMatchObject({
      takeover: true,
      method: 'verification-link',
      removed: { password: true, sessions: 2 },
    });
    // The link is spent.
    expect((await verifyEmail({ token, notMe: true })).body.error.code).toBe('INVALID_VERIFICATION_TOKEN');
  });

  it('FED-06 the squatter’s sequence: the link only opened, then the owner’s "Sign in with Corp" takes the account — the squatter keeps nothing, the profile is the provider’s', async () => {
    const squatter = await squat(accounts.other.email);
    // A scanner or the owner opened the page: nothing was posted, the account stays unverified.
    expect((await login(t, squatter.email)).body.user.emailVerified).toBe(false);
    const owner = await h.signIn('other');
    expect(owner.status).toBe(200);
    expect(owner.body.user).toMatchObject({ id: squatter.id, emailVerified: true });
    await expectLockedOut(squatter);
    const account = (await me(owner.body.tokens.accessToken)).body.user;
    // The provider's names replace the squatter's; its picture is not https, so none.
    expect(account.profile).toEqual({ firstName: accounts.other.given_name, lastName: accounts.other.family_name, avatar: null });
  });

  it('FED-06 an unknown token → 400 INVALID_VERIFICATION_TOKEN; notMe must be a boolean → 400', async () => {
    const bad = await verifyEmail({ token: 'x'.repeat(43), notMe: true });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'INVALID_VERIFICATION_TOKEN']);
    const wrongType = await verifyEmail({ token: 'x'.repeat(43), notMe: 'yes' });
    expect([wrongType.status, wrongType.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
  });

  it(`FED-06 a first password set by a password-less squatter races the owner’s notMe (${RACES} runs): the squatter keeps nothing`, async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < RACES; i += 1) {
      // The squatter's provider does not vouch for the address: a new, unverified, password-less account.
      const squatter = await h.signIn(`squat${i}`);
      expect(squatter.body.user.emailVerified).toBe(false);
      const email = squatter.body.user.email as string;
      const token = await verificationToken(email);
      const [setPassword, disown] = await Promise.all([
        t
          .api()
          .post(`${AUTH}/password/change`)
          .set(...bearer(squatter.body.tokens.accessToken))
          .send({ newPassword: 'squatter keeps a password 42' }),
        verifyEmail({ token, notMe: true }),
      ]);
      expect(disown.status).toBe(200);
      outcomes.push(String(setPassword.status));
      expect((await login(t, email, 'squatter keeps a password 42')).body.error?.code).toBe('INVALID_CREDENTIALS');
      expect((await refresh(squatter.body.tokens.refreshToken)).status).toBe(401);
      const owner = await h.signIn(`owner${i}`);
      expect((await me(owner.body.tokens.accessToken)).body.user).toMatchObject({ hasPassword: false, emailVerified: true });
      expect((await h.identities(owner.body.tokens.accessToken)).map((identity) => identity.subject)).toEqual([`owner${i}`]);
    }
    // Each interleaving is a refusal of the password or its removal: both are fine, only the end state counts.
    expect(outcomes.every((status) => status === '200' || status === '401')).toBe(true);
  });

  it(`FED-06 a link finished by a squatter races the owner’s notMe (${RACES} runs): the squatter’s provider account is not linked`, async () => {
    for (let i = 0; i < RACES; i += 1) {
      const squatter = await squat(uniqueEmail(`race${i}`));
      const { location, verifier } = await h.linkAtProvider(`mallory${i}`, squatter.plain.accessToken);
      const code = location.searchParams.get('link_code')!;
      if (!code) throw new Error(location.href);
      const token = await verificationToken(squatter.email);
      const [linked, disown] = await Promise.all([
        h.finishLink(code, verifier, squatter.plain.accessToken),
        verifyEmail({ token, notMe: true }),
      ]);
      expect(disown.status).toBe(200);
      expect([200, 401]).toContain(linked.status);
      // The squatter's provider account does not land on the disowned account.
      const mallory = await h.signIn(`mallory${i}`);
      expect(mallory.status).toBe(200);
      expect(mallory.body.user.id).not.toBe(squatter.id);
      await expectLockedOut(squatter);
    }
  });

  it('FED-06 the locked row decides: a first password, a link or a profile edit whose request was authenticated before the takeover committed changes nothing', async () => {
    // Both writes are called as a request that passed the access-token check just before the
    // takeover would run them: with the session the takeover has ended since.
    const realm = (await t.app.get(RealmDirectory).find('default'))!;
    const squatter = await h.signIn('lateSquat');
    const email = squatter.body.user.email as string;
    const sessionId = decodeJwt(squatter.body.tokens.accessToken).sid as string;
    const { location, verifier } = await h.linkAtProvider('latelink', squatter.body.tokens.accessToken);
    const code = location.searchParams.get('link_code')!;
    expect((await verifyEmail({ token: await verificationToken(email), notMe: true })).status).toBe(200);

    const userId = squatter.body.user.id as string;
    await expect(
      t.app.get(ChangePasswordUseCase).execute({ realm, userId, sessionId, newPassword: 'squatter keeps a password 42', ip: '127.0.0.1' }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    await expect(
      t.app.get(LinkIdentityUseCase).execute({ realm, userId, sessionId, code, codeVerifier: verifier, ip: '127.0.0.1' }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    // Nor does a profile edit put the squatter's names back on the cleared profile.
    await expect(
      t.app.get(UpdateProfileUseCase).execute({
        realmId: realm.id,
        userId,
        sessionId,
        lifetime: realm.policy.sessionLifetime,
        changes: { firstName: 'Mallory' },
        ip: '127.0.0.1',
      }),
    ).rejects.toMatchObject({ code: 'INVALID_TOKEN' });

    expect((await login(t, email, 'squatter keeps a password 42')).body.error.code).toBe('INVALID_CREDENTIALS');
    const owner = await h.signIn('late');
    expect(owner.body.user.id).toBe(userId);
    expect((await h.identities(owner.body.tokens.accessToken)).map((identity) => identity.subject)).toEqual(['late']);
    expect((await me(owner.body.tokens.accessToken)).body.user).toMatchObject({
      hasPassword: false,
      profile: { firstName: accounts.late.email.split('@')[0] },
    });
  });

  describe('FED-07 a link is bound to the browser and the user that started it', () => {
    it('the attacker starts a link, the victim completes the provider’s pages: nothing is linked to the attacker', async () => {
      const attacker = await signedInUser(t);
      // The attacker starts the link and sends the provider's address to the victim.
      const { verifier, challenge } = pkce();
      const start = await t
        .api()
        .post(`${AUTH}/federation/${ALIAS}/start`)
        .set(...bearer(attacker.accessToken))
        .send({ returnTo: h.returnTo(), codeChallenge: challenge, link: true });
      expect(start.status).toBe(200);
      // The victim, signed in at the provider, goes through its pages; the callback links nothing.
      const back = await h.idp.signIn(start.body.authorizationUrl, 'linkvictim');
      const callback = await h.callback(back);
      expect(callback.status).toBe(303);
      const location = new URL(callback.headers.location);
      const code = location.searchParams.get('link_code')!;
      expect(code).toBeTruthy();
      expect(location.searchParams.get('linked')).toBeNull();
      expect(await h.identities(attacker.accessToken)).toEqual([]);
      // The victim's sign-in with the provider lands in an account of the victim's own.
      const victim = await h.signIn('linkvictim');
      expect(victim.status).toBe(200);
      expect(victim.body.user.id).not.toBe(attacker.id);
      expect(victim.body.user.email).toBe(accounts.linkvictim.email);
      // The code in the victim's address bar is worth nothing to the victim's own session without the attacker's verifier…
      const stolen = await h.finishLink(code, pkce().verifier, victim.body.tokens.accessToken);
      expect([stolen.status, stolen.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
      // … and it is spent: not even the attacker's verifier and token redeem it now.
      const late = await h.finishLink(code, verifier, attacker.accessToken);
      expect([late.status, late.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
      expect(await h.identities(attacker.accessToken)).toEqual([]);
    });

    it('another user’s token with the right verifier → 401 and the code spent; a wrong verifier → 401 and spent; unknown → 401', async () => {
      const owner = await signedInUser(t);
      const other = await signedInUser(t);
      const first = await h.linkAtProvider('linker', owner.accessToken);
      const code = first.location.searchParams.get('link_code')!;
      const foreign = await h.finishLink(code, first.verifier, other.accessToken);
      expect([foreign.status, foreign.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
      const afterForeign = await h.finishLink(code, first.verifier, owner.accessToken);
      expect([afterForeign.status, afterForeign.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

      const second = await h.linkAtProvider('linker', owner.accessToken);
      const code2 = second.location.searchParams.get('link_code')!;
      const wrong = await h.finishLink(code2, pkce().verifier, owner.accessToken);
      expect([wrong.status, wrong.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
      const afterWrong = await h.finishLink(code2, second.verifier, owner.accessToken);
      expect([afterWrong.status, afterWrong.body.error.code]).toEqual([401, 'INVALID_TOKEN']);

      const unknown = await h.finishLink('a'.repeat(43), second.verifier, owner.accessToken);
      expect([unknown.status, unknown.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
      const anonymous = await t
        .api()
        .post(`${AUTH}/federation/link`)
        .send({ code: 'a'.repeat(43), codeVerifier: second.verifier });
      expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
      expect(await h.identities(owner.accessToken)).toEqual([]);
      expect(await h.identities(other.accessToken)).toEqual([]);

      // The right user, verifier and a fresh code: linked, and the owner (who has a password) is told by email.
      const third = await h.link('linker', owner.accessToken);
      expect(third.res!.status).toBe(200);
      expect(third.res!.body.identity).toMatchObject({ provider: ALIAS, subject: 'linker' });
      const rows: { text_body: string }[] = await t.dataSource.query(
        `SELECT text_body FROM email_outbox WHERE recipient = $1 AND text_body LIKE '%was linked to your account%'`,
        [owner.email.toLowerCase()],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].text_body).toContain(`${t.config.apiUrl}/account/#security`);
      await t
        .api()
        .delete(`${AUTH}/identities/${third.res!.body.identity.id}`)
        .set(...bearer(owner.accessToken));
    });
  });
});
