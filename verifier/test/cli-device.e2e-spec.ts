import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApi } from '../../examples/cli-device/api';
import { signInAndCall } from '../../examples/cli-device/cli';
import { ADMIN_ENV, adminApi, superAdmin } from '../../test/support/admin-flows';
import { PASSWORD, register, uniqueEmail } from '../../test/support/flows';
import { Browser, listening, type Page } from '../../test/support/op-browser';
import { createTestApp, type TestApp } from '../../test/support/test-app';

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code';

/*
 * The command-line example (examples/cli-device) as its user runs it: it prints where to go and a
 * code; the user types the code on the service's device page (a browser without JavaScript here),
 * signs in and allows the tool; the tool's call to the API (examples/cli-device/api.ts, protected
 * by the verifier) succeeds.
 */
describe('a command-line tool signs in with the device flow and calls a protected API', () => {
  let t: TestApp;
  let origin: string;
  let issuer: string;
  let clientId: string;
  let api: Server;
  let resource: string;

  beforeAll(async () => {
    // The service's default limit of wrong device codes (tests raise it otherwise).
    t = await createTestApp({ env: { ...ADMIN_ENV, RATE_LIMIT_DEVICE_CODE: '5/600' } });
    origin = await listening(t);
    issuer = `${origin}/realms/default`;
    const admin = adminApi(t, (await superAdmin(t)).accessToken, 'default');
    api = await new Promise<Server>((resolve) => {
      const server = createApi({ issuer, resource: 'http://127.0.0.1' }).listen(0, '127.0.0.1', () => resolve(server));
    });
    // The API's origin is its resource identifier: known once it listens.
    resource = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    api.removeAllListeners('request');
    api.on('request', createApi({ issuer, resource }));
    expect(
      (await admin.post('/resources').send({ identifier: resource, name: 'Profile API', scopes: [{ name: 'profile:read' }] })).status,
    ).toBe(201);
    const created = await admin.post('/clients').send({
      name: 'Example CLI',
      type: 'public',
      grantTypes: [DEVICE_CODE, 'refresh_token'],
      resources: [resource],
      scopes: ['openid', 'profile:read'],
    });
    expect(created.status).toBe(201);
    clientId = created.body.client.clientId;
  });
  afterAll(async () => {
    api.closeAllConnections();
    await new Promise<void>((resolve) => api.close(() => resolve()));
    await t.close();
  });

  /** Starts the tool; resolves its printed code and where to type it once it printed them. */
  function startCli(signal?: AbortSignal) {
    const lines: string[] = [];
    let shown: (value: { uri: string; code: string }) => void;
    const prompt = new Promise<{ uri: string; code: string }>((resolve) => (shown = resolve));
    const run = signInAndCall({
      issuer,
      clientId,
      resource,
      scope: 'openid profile:read',
      apiUrl: `${resource}/me`,
      signal,
      print: (line) => {
        lines.push(line);
        const match = /open (\S+) and enter the code (\S+)$/.exec(line);
        if (match) shown({ uri: match[1], code: match[2] });
      },
    });
    return { lines, prompt, run };
  }

  it('the code shown, typed on the device page, signing in and allowing the tool: the tool’s API call succeeds', async () => {
    const person = await register(t, uniqueEmail('cli'), PASSWORD);
    const cli = startCli();
    const { uri, code } = await cli.prompt;
    expect(uri).toBe(`${issuer}/device`);

    const browser = new Browser(origin);
    let page = await browser.submit(await browser.open(uri), { code });
    expect(page.html).toContain('<button type="submit" name="confirm" value="yes">');
    page = await browser.submit(page, { confirm: 'yes' });
    page = await browser.submit(page, { email: person.email, password: PASSWORD });
    // The tool is no first-party app: the user is asked to allow it.
    expect(page.html).toContain('Example CLI');
    page = await browser.submit(page, { decision: 'allow' });
    expect(page.html).toContain('Your device is connected');

    await expect(cli.run).resolves.toEqual({ status: 200, body: { user: person.id, client: clientId, scopes: ['profile:read'] } });
    expect(cli.lines.at(-1)).toBe(
      `${resource}/me answered 200: ${JSON.stringify({ user: person.id, client: clientId, scopes: ['profile:read'] })}`,
    );
  }, 40_000);

  it('a wrong code 5 times: the page refuses the browser even the right code, and the tool never gets a token', async () => {
    const stop = new AbortController();
    const cli = startCli(stop.signal);
    const { uri, code } = await cli.prompt;
    const browser = new Browser(origin);
    const enter = async (typed: string): Promise<Page> => browser.submit(await browser.open(uri), { code: typed });
    for (let n = 0; n < 5; n++) expect((await enter('BBBB-BBBB')).html).toContain('That code is not valid');
    const refused = await enter(code);
    expect(refused.status).toBe(429);
    expect(refused.html).toContain('Too many wrong codes');
    expect(refused.html).not.toContain('<button type="submit" name="confirm" value="yes">');

    stop.abort();
    await expect(cli.run).rejects.toThrow();
    expect(cli.lines.some((line) => line.startsWith('Signed in'))).toBe(false);
  }, 40_000);
});
