/**
 * Whoever proves an address owns the account made with it, and keeps nothing of a squatter's who
 * registered the address first: not through a password reset, nor through what the squatter set
 * going at an identity provider before the claim (a login code, a link half done). And an identity
 * is its issuer's `sub`: the same `sub` at another issuer is someone else. Against a real OpenID
 * provider (oidc-provider, driven through its own pages).
 */
import { LinkedIdentityRepository } from '../../src/application/ports/linked-identity.repository';
import { adminApi, lastQueuedMailText } from '../support/admin-flows';
import { codeFor, verifyCode } from '../support/email-codes';
import { CLIENT_SECRET, FederationHarness, pkce } from '../support/federation';
import { bearer, login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { TestOidcProvider } from '../support/oidc-provider';
import { addPasskey, AUTH, passkeySignIn } from '../support/passkeys';
import { RELAXED_LIMITS, TestApp } from '../support/test-app';

let counter = 0;
/** An account at the provider that is the squatter's own (no email needed: a link ignores it). */
const squattersAccount = () => `squatter-${Date.now().toString(36)}-${(counter += 1)}`;

describe('claiming an address: nothing of the squatter’s survives, and identities are their issuer’s', () => {
  let h: FederationHarness;
  let t: TestApp;
  let otherIdp: TestOidcProvider;
  const patAtFirst = uniqueEmail('pat');
  const patAtSecond = uniqueEmail('another-pat');
  // One mailbox, its name written with a precomposed "é" here and a decomposed one at the provider.
  const jose = uniqueEmail('jos\u00e9');

  beforeAll(async () => {
    // `pat` names one person at the first issuer and another at the second.
    h = await FederationHarness.start({
      accounts: { pat: { email: patAtFirst, email_verified: true }, jose: { email: jose.normalize('NFD'), email_verified: true } },
      aliases: ['corp', 'moving'],
      app: { env: RELAXED_LIMITS },
    });
    t = h.t;
    await h.register('moving');
    otherIdp = await TestOidcProvider.start({
      redirectUris: [`${t.config.apiUrl}${AUTH}/federation/moving/callback`],
      accounts: { pat: { email: patAtSecond, email_verified: true } },
      clientSecret: CLIENT_SECRET,
    });
  });
  afterAll(async () => {
    await otherIdp?.stop();
    await h?.stop();
  });

  /** start (linking with `accessToken`) → the provider's pages: the URL the provider sends the browser back to. */
  async function atProvider(account: string, options: { alias?: string; accessToken?: string; provider?: TestOidcProvider } = {}) {
    const { res, verifier } = await h.start({
      alias: options.alias,
      ...(options.accessToken ? { headers: { Authorization: `Bearer ${options.accessToken}` }, body: { link: true } } : {}),
    });
    expect(res.status).toBe(200);
    const back = await (options.provider ?? h.idp).signIn(res.body.authorizationUrl, account);
    return { back, verifier };
  }

  /** The browser follows the provider's redirect to the callback: where the service sends it. */
  async function callback(back: string): Promise<URL> {
    const res = await h.callback(back);
    expect(res.status).toBe(303);
    return new URL(res.headers.location);
  }

  const exchange = (code: string | null, codeVerifier: string) => h.exchange(code, codeVerifier);

  /** The squatter registers the victim's address, signs in, and links an account of its own at the provider. */
  async function squat() {
    const email = uniqueEmail('victim');
    const { id } = await register(t, email);
    const signedIn = await login(t, email);
    expect(signedIn.status).toBe(200);
    const account = squattersAccount();
    const accessToken = signedIn.body.tokens.accessToken as string;
    const started = await atProvider(account, { accessToken });
    const linkCode = (await callback(started.back)).searchParams.get('link_code');
    expect((await h.finishLink(linkCode, started.verifier, accessToken)).status).toBe(200);
    return { id, email, account, accessToken: signedIn.body.tokens.accessToken as string };
  }

  const identitiesOf = async (userId: string) =>
    (await t.dataSource.query(`SELECT subject FROM user_identities WHERE user_id = $1`, [userId])).map(
      (r: { subject: string }) => r.subject,
    );

  it('FED-03: a password reset proves an unverified address — the squatter’s passkey and linked account stop signing in', async () => {
    const squatter = await squat();
    const { authenticator } = await addPasskey(t, squatter.accessToken);

    // The owner of the mailbox cannot register (the address is taken) and recovers the account instead.
    expect((await t.api().post(`${AUTH}/password/forgot`).send({ email: squatter.email })).status).toBe(202);
    const token = /reset-password\?token=([A-Za-z0-9_-]+)/.exec(await lastQueuedMailText(t, squatter.email))?.[1];
    expect(token).toBeTruthy();
    const newPassword = 'the owner’s own new passphrase 7';
    expect((await t.api().post(`${AUTH}/password/reset`).send({ token, password: newPassword })).status).toBe(200);

    const byPasskey = await passkeySignIn(t, authenticator);
    const viaProvider = await atProvider(squatter.account);
    const code = (await callback(viaProvider.back)).searchParams.get('code');
    const landed = code ? ((await exchange(code, viaProvider.verifier)).body.user?.id ?? null) : null;
    expect({ passkey: byPasskey.status, providerSignInLandsOn: landed, identities: await identitiesOf(squatter.id) }).toEqual({
      passkey: 401,
      providerSignInLandsOn: null,
      identities: [],
    });
    expect((await login(t, squatter.email, newPassword)).status).toBe(200);
  });

  it('FED-03: a login code the squatter got from its linked account before the takeover does not sign in after it', async () => {
    const squatter = await squat();
    // Minted just before the owner claims the address (a code lives 2 minutes; one can be kept ready at all times).
    const pending = await atProvider(squatter.account);
    const code = (await callback(pending.back)).searchParams.get('code');
    expect(code).toBeTruthy();

    const mail = await codeFor(t, squatter.email);
    const owner = await verifyCode(t, { email: squatter.email, code: mail.code });
    expect(owner.status).toBe(200);
    expect(owner.body.user.id).toBe(squatter.id);

    const res = await exchange(code, pending.verifier);
    expect([res.status, res.body.error?.code]).toEqual([401, 'INVALID_TOKEN']);
  });

  it('FED-03: a login code whose identity was checked before the takeover committed opens no session after it', async () => {
    const squatter = await squat();
    const pending = await atProvider(squatter.account);
    const code = (await callback(pending.back)).searchParams.get('code');
    expect(code).toBeTruthy();
    // The squatter's exchange has found its identity still linked; it goes on once the owner's claim has committed.
    const identities = t.app.get(LinkedIdentityRepository);
    const realFind = identities.findBySubject.bind(identities);
    let reached!: () => void;
    let release!: () => void;
    const arrived = new Promise<void>((resolve) => (reached = resolve));
    const opened = new Promise<void>((resolve) => (release = resolve));
    const spy = jest.spyOn(identities, 'findBySubject').mockImplementationOnce(async (providerId, subject) => {
      const found = await realFind(providerId, subject);
      reached();
      await opened;
      return found;
    });
    try {
      const exchanged = exchange(code, pending.verifier).then((r) => r);
      await arrived;
      const mail = await codeFor(t, squatter.email);
      expect((await verifyCode(t, { email: squatter.email, code: mail.code })).status).toBe(200);
      release();
      const res = await exchanged;
      const me =
        res.status === 200
          ? (
              await t
                .api()
                .get(`${AUTH}/me`)
                .set(...bearer(res.body.tokens.accessToken))
            ).status
          : null;
      expect({ exchange: res.status, code: res.body.error?.code, me }).toEqual({ exchange: 401, code: 'INVALID_TOKEN', me: null });
    } finally {
      spy.mockRestore();
    }
  });

  it('FED-03: a link the squatter started before the takeover links nothing after it', async () => {
    const email = uniqueEmail('victim');
    const { id } = await register(t, email);
    const squatter = await login(t, email);
    // The squatter's browser has been through the provider's pages; it has not followed the redirect yet.
    const { back, verifier } = await atProvider(squattersAccount(), { accessToken: squatter.body.tokens.accessToken });

    const mail = await codeFor(t, email);
    expect((await verifyCode(t, { email, code: mail.code })).status).toBe(200);

    const linkCode = (await callback(back)).searchParams.get('link_code');
    const finished = await h.finishLink(linkCode, verifier, squatter.body.tokens.accessToken);
    expect({ status: finished.status, identities: await identitiesOf(id) }).toEqual({ status: 401, identities: [] });
  });

  it('a link started from a session that has since signed out links nothing', async () => {
    const email = uniqueEmail('linker');
    const { id } = await register(t, email);
    const signedIn = await login(t, email, PASSWORD);
    const { back, verifier } = await atProvider(squattersAccount(), { accessToken: signedIn.body.tokens.accessToken });
    const out = await t.api().post(`${AUTH}/logout`).send({ refreshToken: signedIn.body.tokens.refreshToken });
    expect(out.status).toBe(200);
    const linkCode = (await callback(back)).searchParams.get('link_code');
    const finished = await h.finishLink(linkCode, verifier, signedIn.body.tokens.accessToken);
    expect({ status: finished.status, identities: await identitiesOf(id) }).toEqual({ status: 401, identities: [] });
  });

  it('FED-03: moving a provider to another issuer unlinks its accounts — the same sub there is someone else', async () => {
    const first = await atProvider('pat', { alias: 'moving' });
    const pat = await exchange((await callback(first.back)).searchParams.get('code'), first.verifier);
    expect(pat.body.user).toMatchObject({ email: patAtFirst });

    const moved = await adminApi(t, h.rootToken, 'default').patch('/identity-providers/moving').send({ issuer: otherIdp.issuer });
    expect(moved.status).toBe(200);

    // `pat` at the second issuer is another person, with an address of their own.
    const second = await atProvider('pat', { alias: 'moving', provider: otherIdp });
    const res = await exchange((await callback(second.back)).searchParams.get('code'), second.verifier);
    expect(res.status).toBe(200);
    expect(res.body.user.id).not.toBe(pat.body.user.id);
    expect(res.body.user.email).toBe(patAtSecond);
  });

  it('FED-03: a provider’s address in another Unicode form finds the account of the same mailbox', async () => {
    const existing = await register(t, jose);
    await t.dataSource.query(`UPDATE users SET email_verified = true WHERE id = $1`, [existing.id]);
    const { back, verifier } = await atProvider('jose');
    const res = await exchange((await callback(back)).searchParams.get('code'), verifier);
    expect([res.status, res.body.user?.id]).toEqual([200, existing.id]);
  });

  it('a link, which adds a way in, starts only from a recent sign-in: a session kept alive by refreshes links nothing', async () => {
    const email = uniqueEmail('stale');
    await register(t, email);
    const signedIn = await login(t, email);
    let { refreshToken } = signedIn.body.tokens as { refreshToken: string };
    let accessToken = '';
    // Past RECENT_AUTH_MAX_AGE_SECONDS (900) since the sign-in, refreshed on the way.
    for (let i = 0; i < 2; i++) {
      t.clock.advance(600);
      const refreshed = await t.api().post(`${AUTH}/refresh`).send({ refreshToken });
      expect(refreshed.status).toBe(200);
      ({ refreshToken, accessToken } = refreshed.body.tokens);
    }
    const res = await t
      .api()
      .post(`${AUTH}/federation/corp/start`)
      .set(...bearer(accessToken))
      .send({ returnTo: h.returnTo(), codeChallenge: pkce().challenge, link: true });
    expect([res.status, res.body.error?.code]).toEqual([403, 'FORBIDDEN']);
    expect(res.body.error.message).toMatch(/recent sign-in/);
  });
});
