import type { FederationRefusal } from '../../src/domain/federation/account-linking';
import { adminApi, createRealm } from '../../test/support/admin-flows';
import { FEDERATION_ENV, FederationHarness, providerAccount } from '../../test/support/federation';
import { PASSWORD, register, uniqueEmail } from '../../test/support/flows';
import { code, decodeJwt, midStep, nextStep } from '../../test/support/mfa';
import { freePort } from '../../test/support/sdk-app-page';
import { createTestApp, TestApp } from '../../test/support/test-app';
import { FEDERATION_ERROR_CODES } from '../src/errors.js';
import { createIdentityClient, IdentityError, type FederationErrorCode, type IdentityClient } from '../src/index.js';

const ALIAS = 'corp';
const RETURN_TO = 'https://app.example.test/auth/callback?from=app';

// The callback's error values as the service names them; the type check fails when the two lists differ.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const everyRefusal: Same<
  Lowercase<FederationErrorCode>,
  FederationRefusal | 'access_denied' | 'provider_error' | 'realm_disabled' | 'hook_denied' | 'hook_failed'
> = true;

/** What a browser tab gives the client: its sessionStorage (one per tab), and where it was sent. */
class Tab {
  readonly values = new Map<string, string>();
  readonly navigations: string[] = [];
  readonly sessionStorage = {
    getItem: (k: string) => this.values.get(k) ?? null,
    setItem: (k: string, v: string) => void this.values.set(k, v),
    removeItem: (k: string) => void this.values.delete(k),
  };

  /** Makes this tab the one the client runs in. */
  enter(): this {
    Object.assign(globalThis, {
      sessionStorage: this.sessionStorage,
      location: { href: 'https://app.example.test/', assign: (url: string) => this.navigations.push(url) },
    });
    return this;
  }
}

afterAll(() => {
  for (const name of ['sessionStorage', 'location', 'history']) delete (globalThis as Record<string, unknown>)[name];
});

describe('sign-in with an identity provider through the client: the return page, without a service', () => {
  const sent: string[] = [];
  const client = createIdentityClient({
    baseUrl: 'https://id.example.test',
    realm: 'acme',
    fetch: async (input) => {
      sent.push(String(input));
      throw new Error('no service here');
    },
  });
  afterAll(() => client.destroy());
  beforeEach(() => new Tab().enter());

  it.each(FEDERATION_ERROR_CODES.map((c) => [c.toLowerCase(), c]))(
    'error=%s → IdentityError %s, the description as message',
    async (value, expected) => {
      const url = `${RETURN_TO}&error=${value}&error_description=${encodeURIComponent('Said by the service')}`;
      await expect(client.federation.complete(url)).rejects.toEqual(
        expect.objectContaining({ name: 'IdentityError', code: expected, status: 0, message: 'Said by the service' }),
      );
      expect(sent).toEqual([]);
    },
  );

  it('knows every error value the service redirects with', () => {
    expect(everyRefusal).toBe(true);
    expect(new Set(FEDERATION_ERROR_CODES).size).toBe(9);
  });

  it('an error value it does not know is a PROVIDER_ERROR; a URL without code, link_code or error is null', async () => {
    await expect(client.federation.complete(`${RETURN_TO}&error=server_error`)).rejects.toMatchObject({ code: 'PROVIDER_ERROR' });
    await expect(client.federation.complete(RETURN_TO)).resolves.toBeNull();
    expect(sent).toEqual([]);
  });

  it('on the page itself: the code is taken out of the address bar before anything else, the rest of the URL kept', async () => {
    const replaceState = jest.fn();
    const url = `${RETURN_TO}&code=one-time-code#top`;
    Object.assign(globalThis, { location: { href: url }, history: { state: { kept: 1 }, replaceState } });
    // This tab did not start a sign-in: nothing is sent, and the code is gone from the URL anyway.
    await expect(client.federation.complete()).rejects.toMatchObject({ code: 'FEDERATION_NOT_STARTED_HERE', status: 0 });
    expect(replaceState).toHaveBeenCalledWith({ kept: 1 }, '', '/auth/callback?from=app#top');
    expect(sent).toEqual([]);
  });
});

describe('sign-in with an identity provider through the client, against the service and a real OpenID provider', () => {
  let t: TestApp;
  let harness: FederationHarness;
  let baseUrl: string;
  const clients: IdentityClient[] = [];
  const requests: { url: string; body: Record<string, unknown> }[] = [];
  const accounts = Object.fromEntries(['alice', 'bob', 'mallory', 'linker'].map((sub) => [sub, providerAccount(sub)]));

  const make = (options: { realm?: string; dpop?: boolean } = {}) => {
    const client = createIdentityClient({
      baseUrl,
      realm: options.realm ?? 'default',
      dpop: options.dpop,
      fetch: async (input, init) => {
        requests.push({ url: String(input), body: init?.body ? JSON.parse(String(init.body)) : {} });
        return fetch(input, init);
      },
    });
    clients.push(client);
    return client;
  };

  /** The browser's trip from the provider's authorization URL: its login and consent pages, then the service's callback. */
  async function roundTrip(tab: Tab, account: string, options: { cancel?: boolean } = {}): Promise<string> {
    const authorizationUrl = tab.navigations.pop()!;
    expect(authorizationUrl.startsWith(`${harness.idp.issuer}/`)).toBe(true);
    const back = await harness.idp.signIn(authorizationUrl, account, options);
    const callback = await fetch(back, { redirect: 'manual' });
    expect(callback.status).toBe(303);
    return callback.headers.get('location')!;
  }

  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { ...FEDERATION_ENV, API_URL: baseUrl } });
    await t.app.listen(port, '127.0.0.1');
    harness = await FederationHarness.attach(t, { accounts, aliases: [ALIAS] });
    const admin = adminApi(t, harness.rootToken, 'default');
    expect((await admin.patch('/realm').send({ settings: { allowedReturnUrls: [RETURN_TO] } })).status).toBe(200);
    await createRealm(t, harness.rootToken, 'plain');
  });
  afterAll(async () => {
    clients.forEach((client) => client.destroy());
    await harness?.stop();
    await t?.close();
  });

  it('providers(): the realm’s enabled providers for sign-in buttons; an empty list in a realm without any', async () => {
    expect(await make().federation.providers()).toEqual([{ alias: ALIAS, displayName: `SSO ${ALIAS}` }]);
    expect(await make({ realm: 'plain' }).federation.providers()).toEqual([]);
  });

  it('signInWith → the provider’s pages → complete(): signed in as a new user (amr fed), the verifier kept in this tab until used', async () => {
    const tab = new Tab().enter();
    const client = make();
    await client.ready;
    await client.federation.signInWith(ALIAS, { returnTo: RETURN_TO });
    const start = requests.find((r) => r.url.endsWith(`/federation/${ALIAS}/start`))!;
    expect(start.body).toEqual({ returnTo: RETURN_TO, codeChallenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    const kept = JSON.parse([...tab.values.values()][0]) as { codeVerifier: string };
    expect(kept.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(start.body)).not.toContain(kept.codeVerifier);

    const landed = await roundTrip(tab, 'alice');
    expect(landed).toMatch(/^https:\/\/app\.example\.test\/auth\/callback\?from=app&code=/);
    const result = await client.federation.complete(landed);
    expect(result).toMatchObject({ kind: 'signed-in', user: { email: accounts.alice.email, emailVerified: true } });
    expect(requests.at(-1)!.body).toEqual({ code: new URL(landed).searchParams.get('code'), codeVerifier: kept.codeVerifier });
    expect(tab.values.size).toBe(0);
    expect(client.getSnapshot()).toMatchObject({ status: 'signed-in', amr: ['fed'] });
    const me = await client.me();
    expect(me).toMatchObject({ hasPassword: false, identities: [{ provider: ALIAS, email: accounts.alice.email }] });

    // The same URL again (a reload): the verifier is spent, nothing is sent.
    const before = requests.length;
    await expect(client.federation.complete(landed)).rejects.toMatchObject({ code: 'FEDERATION_NOT_STARTED_HERE' });
    expect(requests.length).toBe(before);
  });

  it('FED-04: the code completes only in the tab that started, with that start’s verifier', async () => {
    const first = new Tab().enter();
    const client = make();
    await client.federation.signInWith(ALIAS, { returnTo: RETURN_TO });
    const landed = await roundTrip(first, 'bob');
    // Another tab (its own sessionStorage) sends nothing.
    new Tab().enter();
    const before = requests.length;
    await expect(client.federation.complete(landed)).rejects.toMatchObject({ code: 'FEDERATION_NOT_STARTED_HERE' });
    expect(requests.length).toBe(before);
    // The starting tab began another flow meanwhile: the first code meets the second verifier, and is refused.
    first.enter();
    await client.federation.signInWith(ALIAS, { returnTo: RETURN_TO });
    await expect(client.federation.complete(landed)).rejects.toMatchObject({ code: 'INVALID_TOKEN', status: 401 });
    expect(client.getSnapshot().status).toBe('signed-out');
  });

  it('the user cancels at the provider → ACCESS_DENIED with the service’s description, not signed in', async () => {
    const tab = new Tab().enter();
    const client = make();
    await client.federation.signInWith(ALIAS, { returnTo: RETURN_TO });
    const landed = await roundTrip(tab, 'bob', { cancel: true });
    const failure = await client.federation.complete(landed).catch((error: IdentityError) => error);
    expect(failure).toBeInstanceOf(IdentityError);
    expect(failure).toMatchObject({ code: 'ACCESS_DENIED', message: 'The sign-in was cancelled at the identity provider' });
    expect(tab.values.size).toBe(0);
    expect(client.getSnapshot().status).toBe('signed-out');
  });

  it('link (from a DPoP-bound session), identities(), unlink(); an account linked to someone else → IDENTITY_IN_USE', async () => {
    const { email } = await register(t, uniqueEmail('linking'));
    const tab = new Tab().enter();
    const client = make({ dpop: true });
    await client.signIn({ email, password: PASSWORD });
    expect(decodeJwt((await client.getAccessToken())!).cnf).toBeDefined();
    expect(await client.federation.identities()).toEqual([]);

    await client.federation.link(ALIAS, { returnTo: RETURN_TO });
    const landed = await roundTrip(tab, 'linker');
    // The callback links nothing: this tab finishes the link with the verifier it kept.
    expect(new URL(landed).searchParams.get('link_code')).toBeTruthy();
    expect(await client.federation.identities()).toEqual([]);
    const linked = await client.federation.complete(landed);
    const identities = await client.federation.identities();
    expect(linked).toEqual({ kind: 'linked', provider: ALIAS, identity: identities[0] });
    expect(identities).toEqual([
      {
        id: expect.any(String),
        provider: ALIAS,
        subject: 'linker',
        email: accounts.linker.email,
        linkedAt: expect.any(String),
        lastUsedAt: expect.any(String),
      },
    ]);
    // alice is the account of another user here.
    await client.federation.link(ALIAS, { returnTo: RETURN_TO });
    await expect(client.federation.complete(await roundTrip(tab, 'alice'))).rejects.toMatchObject({ code: 'IDENTITY_IN_USE' });

    await client.federation.unlink(identities[0].id);
    expect(await client.federation.identities()).toEqual([]);
    await expect(client.federation.unlink(identities[0].id)).rejects.toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('FED-07: a link code lands in another tab (a lured victim’s): nothing is sent and nothing linked', async () => {
    const { email } = await register(t, uniqueEmail('lured'));
    const starter = new Tab().enter();
    const client = make();
    await client.signIn({ email, password: PASSWORD });
    await client.federation.link(ALIAS, { returnTo: RETURN_TO });
    const landed = await roundTrip(starter, 'mallory');
    expect(new URL(landed).searchParams.get('link_code')).toBeTruthy();
    new Tab().enter();
    const before = requests.length;
    await expect(client.federation.complete(landed)).rejects.toMatchObject({ code: 'FEDERATION_NOT_STARTED_HERE' });
    expect(requests.length).toBe(before);
    expect(await client.federation.identities()).toEqual([]);
  });

  it('the last way in of an account made by a provider cannot be unlinked (409 INVALID_USER_STATE)', async () => {
    const tab = new Tab().enter();
    const client = make();
    await client.federation.signInWith(ALIAS, { returnTo: RETURN_TO });
    await client.federation.complete(await roundTrip(tab, 'alice'));
    const [only] = await client.federation.identities();
    await expect(client.federation.unlink(only.id)).rejects.toMatchObject({ code: 'INVALID_USER_STATE', status: 409 });
    expect(await client.federation.identities()).toHaveLength(1);
  });

  it('signInWith refuses a return URL the realm does not allow, before leaving the page', async () => {
    const tab = new Tab().enter();
    const client = make();
    await expect(client.federation.signInWith(ALIAS, { returnTo: 'https://evil.example/cb' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [expect.objectContaining({ field: 'returnTo' })],
    });
    await expect(client.federation.signInWith('nobody', { returnTo: RETURN_TO })).rejects.toMatchObject({
      code: 'IDENTITY_PROVIDER_NOT_FOUND',
    });
    expect(tab.navigations).toEqual([]);
    expect(tab.values.size).toBe(0);
  });

  // Last: the TOTP steps move the service's clock.
  it('a user with TOTP: complete() answers mfa-required, verifyMfa finishes the sign-in', async () => {
    const { id } = await register(t, accounts.mallory.email);
    await t.dataSource.query(`UPDATE users SET email_verified = true WHERE id = $1`, [id]);
    const owner = make();
    await owner.signIn({ email: accounts.mallory.email, password: PASSWORD });
    const setup = await owner.mfa.setupTotp();
    midStep(t);
    await owner.mfa.confirmTotp(code(t, setup.secret));

    const tab = new Tab().enter();
    const client = make();
    await client.federation.signInWith(ALIAS, { returnTo: RETURN_TO });
    const result = await client.federation.complete(await roundTrip(tab, 'mallory'));
    expect(result).toMatchObject({ kind: 'mfa-required', methods: ['totp'], user: { id } });
    expect(client.getSnapshot()).toMatchObject({ status: 'mfa-required', reason: 'sign-in' });
    nextStep(t);
    await client.verifyMfa({ type: 'totp', code: code(t, setup.secret) });
    expect(client.getSnapshot()).toMatchObject({ status: 'signed-in', userId: id });
    expect(decodeJwt((await client.getAccessToken())!).amr).toEqual(expect.arrayContaining(['fed', 'otp']));
  });
});
