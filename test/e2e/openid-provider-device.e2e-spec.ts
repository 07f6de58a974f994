import * as oidc from 'openid-client';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { Browser, listening, Page } from '../support/op-browser';
import { createTestApp, TestApp } from '../support/test-app';

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

/**
 * The device authorization grant (RFC 8628): a TV or a command-line tool (openid-client) asks for
 * a code, the user types it on the service's device page in a browser without JavaScript, signs
 * in, and the device's polling gets tokens.
 */
describe('the OpenID provider’s device authorization grant', () => {
  let t: TestApp;
  let origin: string;
  let issuer: string;
  let admin: ReturnType<typeof adminApi>;

  beforeAll(async () => {
    t = await createTestApp({ env: { ...ADMIN_ENV, RATE_LIMIT_DEVICE_CODE: '5/600' } });
    origin = await listening(t);
    issuer = `${origin}/realms/default`;
    admin = adminApi(t, (await superAdmin(t)).accessToken, 'default');
  });
  afterAll(() => t.close());

  async function device(body: Record<string, unknown> = {}) {
    const created = await admin
      .post('/clients')
      .send({ name: 'Living-room TV', type: 'public', grantTypes: [DEVICE_CODE, 'refresh_token'], firstParty: true, ...body });
    expect(created.status).toBe(201);
    return oidc.discovery(new URL(issuer), created.body.client.clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  }

  /** Opens the device page and types `code`. */
  async function enter(browser: Browser, verificationUri: string, code: string): Promise<Page> {
    const page = await browser.open(verificationUri);
    expect(page.status).toBe(200);
    return browser.submit(page, { code });
  }

  it('publishes the device authorization endpoint and grant', async () => {
    const doc = (await t.api().get('/realms/default/.well-known/openid-configuration')).body;
    expect(doc.device_authorization_endpoint).toBe(`${issuer}/device/auth`);
    expect(doc.grant_types_supported).toContain(DEVICE_CODE);
  });

  it('a device gets tokens once the user typed its code (lower case, no dash) on the page without JavaScript and signed in', async () => {
    const config = await device();
    const person = await register(t, uniqueEmail('op-device'));
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email offline_access' });
    expect(started.user_code).toMatch(USER_CODE);
    expect(started.expires_in).toBe(600);
    expect(started.verification_uri).toBe(`${issuer}/device`);
    const polling = oidc.pollDeviceAuthorizationGrant(config, started);

    const browser = new Browser(origin);
    const entry = await browser.open(started.verification_uri);
    expect(entry.html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(entry.html).toMatch(/<input id="code" name="code" type="text"/);
    expect(entry.html).not.toContain('<script');
    expect(entry.headers.get('content-security-policy')).toContain("script-src 'self'");
    let page = await browser.submit(entry, { code: started.user_code.replace('-', '').toLowerCase() });
    expect(page.html).toContain(started.user_code);
    expect(page.html).toContain('<button type="submit" name="confirm" value="yes">');
    page = await browser.submit(page, { confirm: 'yes' });
    expect(page.html).toMatch(/name="email" type="email"/);
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    expect(page.status).toBe(200);
    expect(page.html).toContain('Your device is connected');

    const tokens = await polling;
    expect(tokens.claims()).toMatchObject({ iss: issuer, sub: person.id });
    expect(tokens.refresh_token).toBeDefined();
    const info = await oidc.fetchUserInfo(config, tokens.access_token, person.id);
    expect(info.email).toBe(person.email);
  }, 30_000);

  it('cancelled on the confirmation page, the device’s polling gets access_denied', async () => {
    const config = await device();
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const polling = oidc.pollDeviceAuthorizationGrant(config, started);
    const browser = new Browser(origin);
    const confirmation = await enter(browser, started.verification_uri, started.user_code);
    const cancelled = await browser.submit(confirmation, { abort: 'yes' });
    expect(cancelled.html).toContain('The device was not connected');
    await expect(polling).rejects.toMatchObject({ error: 'access_denied' });
  }, 30_000);

  it('a browser that entered 5 wrong codes is refused the 6th entry, even the right code', async () => {
    const config = await device();
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    const browser = new Browser(origin);
    for (let n = 0; n < 5; n++) {
      const wrong = await enter(browser, started.verification_uri, 'BBBB-BBBB');
      expect(wrong.status).toBe(200);
      expect(wrong.html).toContain('That code is not valid');
    }
    const refused = await enter(browser, started.verification_uri, started.user_code);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.html).not.toContain(started.user_code);
    // Another browser is not affected.
    const other = await enter(new Browser(origin), started.verification_uri, started.user_code);
    expect(other.html).toContain('<button type="submit" name="confirm" value="yes">');
  });

  it('a device polling faster than the interval is told slow_down; until the user answers, authorization_pending', async () => {
    const config = await device();
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    // No interval answered: RFC 8628's default, 5 seconds.
    expect(started.interval ?? 5).toBe(5);
    const poll = () =>
      t
        .api()
        .post('/realms/default/token')
        .type('form')
        .send({ grant_type: DEVICE_CODE, device_code: started.device_code, client_id: config.clientMetadata().client_id });
    const first = await poll();
    expect([first.status, first.body.error]).toEqual([400, 'authorization_pending']);
    const early = await poll();
    expect([early.status, early.body.error]).toEqual([400, 'slow_down']);
  });

  // Last: it spends the wrong codes this address may enter for ten minutes.
  it('browsers that drop their cookie for a fresh one are held by their address: 10 times the limit, then every entry is refused', async () => {
    const config = await device();
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid' });
    let wrong = 0;
    let refused: Page | null = null;
    while (!refused && wrong < 60) {
      const page = await enter(new Browser(origin), started.verification_uri, 'ZZZZ-ZZZZ');
      if (page.status === 429) refused = page;
      else wrong += 1;
    }
    // 5 wrong codes of an earlier test came from this address too.
    expect(wrong + 5).toBe(50);
    const right = await enter(new Browser(origin), started.verification_uri, started.user_code);
    expect(right.status).toBe(429);
  });
});
