import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { Browser } from 'playwright-core';
import { signInAndCall } from '../../examples/cli-device/cli';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { launchChromium } from '../support/chromium';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { freePort } from '../support/sdk-app-page';
import { createTestApp, TestApp } from '../support/test-app';

jest.setTimeout(180_000);

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * The command-line example (examples/cli-device) with its user in Chromium: the code the tool
 * prints is typed on the device page, the user signs in and allows the tool, and the tool's call
 * to an API checking the token's audience and scope succeeds.
 */
describe('a command-line tool signed in through the device page in Chromium', () => {
  let t: TestApp;
  let issuer: string;
  let browser: Browser;
  let apiServer: Server;
  let resource: string;
  let clientId: string;

  beforeAll(async () => {
    const port = await freePort();
    const origin = `http://localhost:${port}`;
    issuer = `${origin}/realms/default`;
    t = await createTestApp({ env: { ...ADMIN_ENV, API_URL: origin } });
    await t.app.listen(port, '127.0.0.1');
    browser = await launchChromium();

    // The API: 200 for a token of its resource with profile:read, 401 otherwise.
    const keys = createRemoteJWKSet(new URL(`${issuer}/jwks`));
    apiServer = createServer((req, res) => {
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      jwtVerify(token, keys, { issuer, audience: resource, typ: 'at+jwt' })
        .then(({ payload }) => {
          const ok = String(payload.scope).split(' ').includes('profile:read');
          res.statusCode = ok ? 200 : 403;
          res.end(JSON.stringify({ user: payload.sub }));
        })
        .catch(() => {
          res.statusCode = 401;
          res.end('{}');
        });
    });
    await new Promise<void>((resolve) => apiServer.listen(0, '127.0.0.1', resolve));
    resource = `http://127.0.0.1:${(apiServer.address() as AddressInfo).port}`;

    const admin = adminApi(t, (await superAdmin(t)).accessToken, 'default');
    expect(
      (await admin.post('/resources').send({ identifier: resource, name: 'Profile API', scopes: [{ name: 'profile:read' }] })).status,
    ).toBe(201);
    const created = await admin.post('/clients').send({
      name: 'Example CLI',
      type: 'public',
      grantTypes: [DEVICE_CODE],
      resources: [resource],
      scopes: ['openid', 'profile:read'],
    });
    expect(created.status).toBe(201);
    clientId = created.body.client.clientId;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => apiServer.close(() => resolve()));
    await t?.close();
  });

  it('the printed code typed on the device page, sign-in and consent: the tool’s call succeeds', async () => {
    const person = await register(t, uniqueEmail('cli-browser'), PASSWORD);
    let shown: (value: { uri: string; code: string }) => void;
    const prompt = new Promise<{ uri: string; code: string }>((resolve) => (shown = resolve));
    const run = signInAndCall({
      issuer,
      clientId,
      resource,
      scope: 'openid profile:read',
      apiUrl: `${resource}/me`,
      print: (line) => {
        const match = /open (\S+) and enter the code (\S+)$/.exec(line);
        if (match) shown({ uri: match[1], code: match[2] });
      },
    });
    const { uri, code } = await prompt;

    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const tab = await context.newPage();
    await tab.goto(uri);
    await tab.fill('input[name=code]', code.toLowerCase());
    await tab.click('button[type=submit]');
    await tab.click('button[name=confirm][value=yes]');
    await tab.fill('input[name=email]', person.email);
    await tab.fill('input[name=password]', PASSWORD);
    await tab.click('button[type=submit]');
    await tab.waitForSelector('text=Example CLI');
    await tab.click('button[name=decision][value=allow]');
    await tab.waitForSelector('text=Your device is connected');
    await context.close();

    await expect(run).resolves.toEqual({ status: 200, body: { user: person.id } });
  });
});
