import * as jose from 'jose';
import * as oidc from 'openid-client';
import { HousekeepingUseCase } from '../../src/application/housekeeping/housekeeping.use-case';
import { SessionRepository } from '../../src/application/ports/session.repository';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { BackchannelReceiver, ReceivedLogout } from '../support/backchannel-receiver';
import { bearer, PASSWORD, register, uniqueEmail } from '../support/flows';
import { authorizationRequest, Browser, listening, Page } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';

const REDIRECT = 'https://app.example.test/callback';
const SIGNED_OUT = 'https://app.example.test/signed-out';
const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * Ending one of the service's sessions, whatever ends it, ends what apps got through it: their
 * session-bound refresh tokens stop working and each app with a back-channel logout URI receives a
 * logout token (OpenID Back-Channel Logout 1.0). Clients come from the admin API.
 */
describe('the OpenID provider when a session ends', () => {
  let t: TestApp;
  let origin: string;
  let issuer: string;
  let admin: ReturnType<typeof adminApi>;
  let receiver: BackchannelReceiver;
  let jwks: ReturnType<typeof jose.createRemoteJWKSet>;

  beforeAll(async () => {
    receiver = await BackchannelReceiver.start();
    t = await createTestApp({
      // The outbox polls as in production (every second by default; faster here), nothing is pushed by hand.
      env: { ...ADMIN_ENV, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', OUTBOX_POLL_INTERVAL_MS: '200' },
    });
    origin = await listening(t);
    issuer = `${origin}/realms/default`;
    admin = adminApi(t, (await superAdmin(t)).accessToken, 'default');
    const discovery = (await t.api().get('/realms/default/.well-known/openid-configuration')).body;
    expect(discovery.backchannel_logout_supported).toBe(true);
    expect(discovery.backchannel_logout_session_supported).toBe(true);
    jwks = jose.createRemoteJWKSet(new URL(discovery.jwks_uri));
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  /** A received logout token whose (unverified) sid is `sid`. */
  const naming = (sid: string) => (logout: ReceivedLogout) => jose.decodeJwt(logout.logoutToken).sid === sid;

  async function app(body: Record<string, unknown>) {
    const created = await admin.post('/clients').send({ name: 'Team app', type: 'public', redirectUris: [REDIRECT], ...body });
    expect(created.status).toBe(201);
    const clientId: string = created.body.client.clientId;
    const config = await oidc.discovery(new URL(issuer), clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    return { clientId, config };
  }

  /** Signs `email` in through the pages (allowing consent when asked) and redeems the code. */
  async function signIn(config: oidc.Configuration, browser: Browser, email: string, params: Record<string, string> = {}) {
    const request = await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid email', ...params });
    let page: Page = await browser.open(request.url.href);
    if (!page.location && /name="password"/.test(page.html)) page = await browser.submit(page, { email, password: PASSWORD });
    if (!page.location) page = await browser.submit(page, { decision: 'allow' });
    return oidc.authorizationCodeGrant(config, new URL(page.location!), {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
    });
  }

  it('an administrator revokes the session: the app receives a verifiable logout token within 10 s, and its refresh token is refused', async () => {
    const { clientId, config } = await app({ firstParty: true, backchannelLogoutUri: receiver.url });
    const person = await register(t, uniqueEmail('op-bcl'));
    const tokens = await signIn(config, new Browser(origin), person.email);
    const sid = tokens.claims()!.sid as string;
    expect(tokens.refresh_token).toBeDefined();
    // Still good before the session ends.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);

    const startedAt = Date.now();
    expect((await admin.delete(`/sessions/${sid}`)).status).toBe(200);
    const logout = await receiver.waitFor(naming(sid), 10_000);
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect(logout.contentType).toBe('application/x-www-form-urlencoded');
    const { payload, protectedHeader } = await jose.jwtVerify(logout.logoutToken, jwks, {
      issuer,
      audience: clientId,
      typ: 'logout+jwt',
      maxTokenAge: '2 minutes',
    });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({ sub: person.id, sid, events: { [BACKCHANNEL_EVENT]: {} } });
    expect(typeof payload.jti).toBe('string');
    expect(typeof payload.exp).toBe('number');
    expect(payload.nonce).toBeUndefined();

    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const outbox: { status: string }[] = await t.dataSource.query(`SELECT status FROM op_backchannel_logouts WHERE client_id = $1`, [
      clientId,
    ]);
    expect(outbox).toEqual([{ status: 'delivered' }]);
    // Housekeeping deletes what was sent a week ago.
    await t.dataSource.query(`UPDATE op_backchannel_logouts SET created_at = created_at - interval '8 days' WHERE client_id = $1`, [
      clientId,
    ]);
    await t.app.get(HousekeepingUseCase).execute();
    expect(await t.dataSource.query(`SELECT 1 FROM op_backchannel_logouts WHERE client_id = $1`, [clientId])).toEqual([]);
  });

  it('the user ending the session elsewhere (DELETE /sessions/:id) ends the app’s session-bound refresh token too; an app without a back-channel URI is sent nothing', async () => {
    const { clientId, config } = await app({ firstParty: true });
    const person = await register(t, uniqueEmail('op-end'));
    const tokens = await signIn(config, new Browser(origin), person.email);
    const sid = tokens.claims()!.sid as string;
    const console = await t.api().post('/api/v1/auth/login').send({ email: person.email, password: PASSWORD });
    const revoked = await t
      .api()
      .delete(`/api/v1/auth/sessions/${sid}`)
      .set(...bearer(console.body.tokens.accessToken));
    expect(revoked.status).toBe(200);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const outbox = await t.dataSource.query(`SELECT 1 FROM op_backchannel_logouts WHERE client_id = $1`, [clientId]);
    expect(outbox).toEqual([]);
  });

  it('an offline_access refresh token outlives a plain end of the session, but not a password reset', async () => {
    const { config } = await app({ firstParty: false, backchannelLogoutUri: receiver.url });
    const person = await register(t, uniqueEmail('op-offline'));
    const tokens = await signIn(config, new Browser(origin), person.email, { scope: 'openid offline_access', prompt: 'consent' });
    const sid = tokens.claims()!.sid as string;
    expect((await admin.delete(`/sessions/${sid}`)).status).toBe(200);
    const kept = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(kept.access_token).toBeTruthy();

    const reset = await admin.post(`/users/${person.id}/reset-password`).send({ password: 'another long password 42' });
    expect(reset.status).toBe(200);
    await expect(oidc.refreshTokenGrant(config, kept.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a session flagged as used from another device ends its apps’ grants as a revocation does', async () => {
    const { config } = await app({ firstParty: true });
    const person = await register(t, uniqueEmail('op-flag'));
    const tokens = await signIn(config, new Browser(origin), person.email);
    const sid = tokens.claims()!.sid as string;
    // The service's session is flagged, as the fingerprint check does on a mismatch.
    const sessions = t.app.get(SessionRepository);
    const session = (await sessions.findById('default', sid))!;
    session.flagMismatch(0.1, new Date());
    expect(await sessions.save(session)).toBe(true);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  describe('RP-initiated logout', () => {
    async function signedInApp() {
      const registered = await app({ firstParty: true, postLogoutRedirectUris: [SIGNED_OUT], backchannelLogoutUri: receiver.url });
      const person = await register(t, uniqueEmail('op-rp-logout'));
      const browser = new Browser(origin);
      const tokens = await signIn(registered.config, browser, person.email);
      return { ...registered, person, browser, tokens, sid: tokens.claims()!.sid as string };
    }

    const sessionRevoked = async (sid: string) =>
      (await t.dataSource.query(`SELECT revoke_reason FROM sessions WHERE id = $1`, [sid]))[0]?.revoke_reason as string | null;

    it('asks on the service’s page; confirmed, it ends the service’s session and returns to the registered address with the state', async () => {
      const { config, browser, tokens, sid } = await signedInApp();
      const url = oidc.buildEndSessionUrl(config, {
        client_id: config.clientMetadata().client_id,
        post_logout_redirect_uri: SIGNED_OUT,
        state: 'xyz',
      });
      const page = await browser.open(url.href);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(page.html).toContain('<button type="submit" name="logout" value="yes">');
      expect(page.html).not.toContain('<script');
      expect(await sessionRevoked(sid)).toBeNull();

      const done = await browser.submit(page, { logout: 'yes' });
      expect(done.status).toBe(303);
      const back = new URL(done.location!);
      expect([back.origin + back.pathname, back.searchParams.get('state')]).toEqual([SIGNED_OUT, 'xyz']);
      expect(await sessionRevoked(sid)).toBe('logout');
      await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
      // The next app's sign-in asks again.
      const again = await browser.open((await authorizationRequest(config, { redirect_uri: REDIRECT, scope: 'openid' })).url.href);
      expect(again.html).toMatch(/name="password"/);
    });

    it('an ID token naming the browser’s session needs no confirmation; the apps signed in with it get their back-channel logout', async () => {
      const { config, clientId, browser, tokens, sid } = await signedInApp();
      const url = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 's1' });
      const page = await browser.open(url.href);
      // A form that submits itself (its one script allowed by hash), and a button without JavaScript.
      expect(page.html).toContain('<input type="hidden" name="logout" value="yes">');
      expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
      const done = await browser.submit(page, {});
      expect(new URL(done.location!).searchParams.get('state')).toBe('s1');
      expect(await sessionRevoked(sid)).toBe('logout');
      const logout = await receiver.waitFor(naming(sid), 10_000);
      const { payload } = await jose.jwtVerify(logout.logoutToken, jwks, { issuer, audience: clientId, typ: 'logout+jwt' });
      expect(payload.sid).toBe(sid);
    });

    it('a post_logout_redirect_uri the app did not register gets the service’s error page, never a redirect; the session stays', async () => {
      const { config, browser, sid } = await signedInApp();
      for (const uri of [`${SIGNED_OUT}/`, 'https://evil.example/signed-out', `${SIGNED_OUT}?next=x`]) {
        const url = oidc.buildEndSessionUrl(config, { client_id: config.clientMetadata().client_id, post_logout_redirect_uri: uri });
        const page = await browser.open(url.href);
        expect([page.status, page.location]).toEqual([400, null]);
        expect(page.html).toContain('post_logout_redirect_uri');
      }
      expect(await sessionRevoked(sid)).toBeNull();
    });

    it('the confirmation cannot be forged: a post without the page’s xsrf value ends nothing', async () => {
      const { config, browser, sid } = await signedInApp();
      const page = await browser.open(oidc.buildEndSessionUrl(config, { client_id: config.clientMetadata().client_id }).href);
      const forged = await browser.submit(page, { logout: 'yes', xsrf: 'forged' });
      expect(forged.status).toBe(400);
      expect(await sessionRevoked(sid)).toBeNull();
      // Without a return address, the service's own page says so.
      const done = await browser.submit(page, { logout: 'yes' });
      expect(done.status).toBe(200);
      expect(done.html).toContain('You are signed out');
      expect(await sessionRevoked(sid)).toBe('logout');
    });
  });
});
