import http from 'node:http';
import { AddressInfo } from 'node:net';
import { HostResolver, ResolvedAddress } from '../../src/application/ports/host-resolver';
import { WebhookDispatcher } from '../../src/adapters/webhooks/webhook-dispatcher';
import { ADMIN_ENV, adminApi, superAdmin } from '../support/admin-flows';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { ScriptedResolver } from '../fakes/scripted-resolver';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * The address rules of webhooks with WEBHOOK_ALLOW_PRIVATE_NETWORKS off, as in production: only
 * public addresses, checked at creation and again at every attempt, connecting to the address
 * that was checked. Names are answered by an injected resolver the tests control.
 */

const PUBLIC_V4: ResolvedAddress = { address: '93.184.216.34', family: 4 };

describe('webhooks: no SSRF (https only, public addresses only)', () => {
  let t: TestApp;
  let token: string;
  const resolver = new ScriptedResolver();

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV, override: (b) => b.overrideProvider(HostResolver).useValue(resolver) });
    token = (await superAdmin(t)).accessToken;
  });
  afterAll(async () => {
    await t?.close();
  });

  async function create(url: string) {
    return adminApi(t, token, 'default')
      .post('/webhooks')
      .send({ url, events: ['*'] });
  }

  it.each([
    ['loopback', 'https://127.0.0.1/hook'],
    ['loopback, elsewhere in 127/8', 'https://127.1.2.3/hook'],
    ['localhost by name', 'https://localhost/hook'],
    ['private 10/8', 'https://10.0.0.5/hook'],
    ['private 172.16/12', 'https://172.16.3.4/hook'],
    ['private 192.168/16', 'https://192.168.1.1/hook'],
    ['carrier-grade NAT', 'https://100.64.0.1/hook'],
    ['link-local', 'https://169.254.10.10/hook'],
    ['cloud metadata (IPv4)', 'https://169.254.169.254/latest/meta-data/'],
    ['cloud metadata (IPv6)', 'https://[fd00:ec2::254]/latest/meta-data/'],
    ['unique-local IPv6', 'https://[fc00::1]/hook'],
    ['link-local IPv6', 'https://[fe80::1]/hook'],
    ['IPv6 loopback', 'https://[::1]/hook'],
    ['unspecified 0.0.0.0', 'https://0.0.0.0/hook'],
    ['unspecified, shortest form', 'https://0/hook'],
    ['IPv6 unspecified', 'https://[::]/hook'],
    ['multicast', 'https://224.0.0.1/hook'],
    ['IPv6 multicast', 'https://[ff02::1]/hook'],
    ['broadcast', 'https://255.255.255.255/hook'],
    ['decimal-encoded loopback', 'https://2130706433/hook'],
    ['hex-encoded loopback', 'https://0x7f000001/hook'],
    ['octal-encoded loopback', 'https://0177.0.0.1/hook'],
    ['shortened loopback', 'https://127.1/hook'],
    ['decimal-encoded metadata', 'https://2852039166/hook'],
    ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hook'],
    ['IPv4-mapped IPv6 metadata', 'https://[::ffff:169.254.169.254]/hook'],
    ['IPv4-mapped IPv6, hex form', 'https://[::ffff:7f00:1]/hook'],
    ['NAT64 of loopback', 'https://[64:ff9b::127.0.0.1]/hook'],
  ])('refuses %s at creation: %s', async (_name, url) => {
    resolver.answers.set('localhost', [{ address: '127.0.0.1', family: 4 }]);
    const res = await create(url);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.details).toEqual([{ field: 'url', message: expect.any(String) }]);
  });

  it('refuses a name with one private address among public ones', async () => {
    resolver.answers.set('mixed.example.com', [PUBLIC_V4, { address: '10.1.1.1', family: 4 }]);
    expect((await create('https://mixed.example.com/hook')).status).toBe(400);
  });

  it('refuses http:// without WEBHOOK_ALLOW_HTTP, credentials in the URL, and names that do not resolve', async () => {
    resolver.answers.set('public.example.com', [PUBLIC_V4]);
    for (const url of ['http://public.example.com/hook', 'https://user:pw@public.example.com/hook', 'https://nowhere.example.com/hook']) {
      const res = await create(url);
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
    }
  });

  it('accepts a public address, and a name whose every address is public', async () => {
    resolver.answers.set('public.example.com', [PUBLIC_V4, { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 }]);
    expect((await create('https://public.example.com/hook')).status).toBe(201);
    expect((await create('https://93.184.216.34/hook')).status).toBe(201);
    expect((await create('https://[::ffff:93.184.216.34]/hook')).status).toBe(201);
  });

  it('refuses a changed URL at PATCH the same way', async () => {
    resolver.answers.set('public.example.com', [PUBLIC_V4]);
    const created = await create('https://public.example.com/hook');
    const res = await t
      .api()
      .patch(`/v1/admin/webhooks/${created.body.webhook.id}`)
      .set('Authorization', `Bearer ${token}`)
      .set('X-Realm-Id', 'default')
      .send({ url: 'https://2130706433/hook' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
  });
});

describe('webhooks: DNS rebinding (public at creation, loopback at delivery)', () => {
  let t: TestApp;
  let server: http.Server;
  let port: number;
  let connections = 0;
  const resolver = new ScriptedResolver();

  beforeAll(async () => {
    // A listener on loopback that counts every connection, whatever is sent on it.
    server = http.createServer((_req, res) => res.end());
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    // http is allowed here only so that a missed check would reach the plain listener.
    t = await createTestApp({
      env: { ...ADMIN_ENV, WEBHOOK_ALLOW_HTTP: 'true' },
      override: (b) => b.overrideProvider(HostResolver).useValue(resolver),
    });
  });
  afterAll(async () => {
    await t?.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('does not connect when the name resolves to loopback at delivery; the attempt fails and is retried', async () => {
    const token = (await superAdmin(t)).accessToken;
    resolver.answers.set('rebind.example.com', [PUBLIC_V4]);
    const res = await adminApi(t, token, 'default')
      .post('/webhooks')
      .send({ url: `http://rebind.example.com:${port}/hook`, events: ['user.registered'] });
    expect(res.status).toBe(201);

    resolver.answers.set('rebind.example.com', [{ address: '127.0.0.1', family: 4 }]);
    await register(t, uniqueEmail('rebind'), PASSWORD);
    expect(await t.app.get(WebhookDispatcher).dispatchDue()).toEqual({ delivered: 0, retrying: 1, failed: 0 });
    expect(connections).toBe(0);
    const list = await adminApi(t, token, 'default').get(`/webhooks/${res.body.webhook.id}/deliveries`);
    expect(list.body.deliveries[0]).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null });
    expect(list.body.deliveries[0].lastError).toMatch(/127\.0\.0\.1 is not public/);

    // The same listener is reachable: with a rule that allowed it, the attempt would connect.
    const probe = await fetch(`http://127.0.0.1:${port}/`);
    expect(probe.status).toBe(200);
    expect(connections).toBe(1);
  });
});
