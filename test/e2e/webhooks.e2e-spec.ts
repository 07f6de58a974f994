import { Webhook as StandardWebhook } from 'standardwebhooks';
import { HostResolver, ResolvedAddress } from '../../src/application/ports/host-resolver';
import { WebhookDispatcher } from '../../src/adapters/webhooks/webhook-dispatcher';
import { ADMIN_ENV, adminApi, createRealm, createUser, storedEvents, superAdmin } from '../support/admin-flows';
import { bearer, login, PASSWORD, register, signedInUser, uniqueEmail } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Webhooks end to end: admin routes, deliveries written with their events, and a real HTTP
 * receiver that verifies every request with the reference Standard Webhooks library. The
 * dispatcher is driven by hand (`dispatchDue()`, polling off) and time moves with the test clock.
 * Receivers listen on 127.0.0.1, so these tests allow http and private networks; the address
 * rules have their own file (webhooks-ssrf).
 */

/** Resolves `*.receiver.test` to loopback (no such name exists in DNS), everything else as the system does. */
class TestResolver extends HostResolver {
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    if (hostname.endsWith('.receiver.test')) return [{ address: '127.0.0.1', family: 4 }];
    throw new Error(`unexpected lookup of ${hostname}`);
  }
}

let realmCounter = 0;

describe('webhooks: admin API and signed delivery to a real receiver', () => {
  let t: TestApp;
  let root: string;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        ...ADMIN_ENV,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '5s,1m',
        // Tests move the clock by hours; the admin's token should outlive that.
        ACCESS_TOKEN_TTL_SECONDS: '86400',
      },
      override: (b) => b.overrideProvider(HostResolver).useValue(new TestResolver()),
    });
  });
  beforeEach(async () => {
    root = (await superAdmin(t)).accessToken;
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.down()));
    await t?.close();
  });

  /** A realm of its own per test, so deliveries of one test never reach another's receiver. */
  async function freshRealm(): Promise<string> {
    realmCounter += 1;
    const id = `wh-${Date.now().toString(36)}-${realmCounter}`;
    await createRealm(t, root, id);
    return id;
  }

  async function receiver(): Promise<WebhookReceiver> {
    const r = await WebhookReceiver.start();
    receivers.push(r);
    return r;
  }

  function admin(realm: string, token = root) {
    const api = adminApi(t, token, realm);
    return {
      ...api,
      patch: (path: string) =>
        t
          .api()
          .patch(`/v1/admin${path}`)
          .set(...bearer(token))
          .set('X-Realm-Id', realm),
    };
  }

  async function subscribe(realm: string, r: WebhookReceiver, events: string[], url = r.url) {
    const res = await admin(realm).post('/webhooks').send({ url, events, description: 'test receiver' });
    expect(res.status).toBe(201);
    r.secrets = [res.body.webhook.secret];
    return res.body.webhook as { id: string; secret: string; url: string; events: string[]; enabled: boolean };
  }

  function dispatch() {
    return t.app.get(WebhookDispatcher).dispatchDue();
  }

  async function deliveries(realm: string, webhookId: string, query = '') {
    const res = await admin(realm).get(`/webhooks/${webhookId}/deliveries${query}`);
    expect(res.status).toBe(200);
    return res.body.deliveries as {
      id: string;
      eventId: string;
      type: string;
      status: string;
      attempts: number;
      lastStatusCode: number | null;
      lastError: string | null;
      nextAttemptAt: string | null;
    }[];
  }

  describe('delivery', () => {
    it('delivers a subscribed event as a Standard Webhooks request that the reference library verifies', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const hook = await subscribe(realm, r, ['user.registered']);
      expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(hook.secret.slice(6), 'base64')).toHaveLength(32);

      const user = await register(t, uniqueEmail('hooked'), PASSWORD, realm);
      expect(await dispatch()).toMatchObject({ delivered: 1 });
      await r.waitFor((all) => all.length === 1);
      const [request] = r.received;
      expect(request.verifiedWith).toEqual([hook.secret]);
      expect(request).toMatchObject({ method: 'POST', path: '/hooks/identity', contentType: 'application/json' });
      expect(request.timestamp).toMatch(/^\d{10}$/);
      expect(Math.abs(Number(request.timestamp) - Date.now() / 1000)).toBeLessThan(60);
      expect(request.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);

      // The payload: {type, timestamp, data}, data being the event exactly as GET /events lists it.
      const listed = await admin(realm).get(`/events?type=user.registered&userId=${user.id}`);
      expect(listed.body.events).toHaveLength(1);
      expect(JSON.parse(request.body)).toEqual({
        type: 'user.registered',
        timestamp: listed.body.events[0].at,
        data: listed.body.events[0],
      });
      expect(request.body).not.toContain(PASSWORD);

      const [delivery] = await deliveries(realm, hook.id);
      expect(delivery).toMatchObject({
        id: request.id,
        eventId: listed.body.events[0].id,
        type: 'user.registered',
        status: 'delivered',
        attempts: 1,
        lastStatusCode: 204,
        lastError: null,
        nextAttemptAt: null,
      });
    });

    it('tampering is caught by the receiver: a changed body or another secret does not verify', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const hook = await subscribe(realm, r, ['user.registered']);
      await register(t, uniqueEmail('tamper'), PASSWORD, realm);
      await dispatch();
      await r.waitFor((all) => all.length === 1);
      const [request] = r.received;
      const headers = { 'webhook-id': request.id, 'webhook-timestamp': request.timestamp, 'webhook-signature': request.signature };
      expect(() => new StandardWebhook(hook.secret).verify(request.body, headers)).not.toThrow();
      expect(() => new StandardWebhook(hook.secret).verify(request.body.replace('user.registered', 'user.deleted'), headers)).toThrow();
      const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      expect(() => new StandardWebhook(other).verify(request.body, headers)).toThrow();
    });

    it('sends only the subscribed types; "*" gets every event, including webhook.* ones', async () => {
      const realm = await freshRealm();
      const logins = await receiver();
      const everything = await receiver();
      await subscribe(realm, logins, ['login.succeeded']);
      const all = await subscribe(realm, everything, ['*']);
      const user = await register(t, uniqueEmail('types'), PASSWORD, realm);
      expect((await login(t, user.email, PASSWORD, {}, realm)).status).toBe(200);
      expect((await login(t, user.email, 'wrong password', {}, realm)).status).toBe(401);
      await admin(realm)
        .post('/webhooks')
        .send({ url: logins.url, events: ['user.deleted'] });
      await dispatch();
      await everything.waitFor((received) => received.length >= 5);
      expect(logins.received.map((x) => x.payload.type)).toEqual(['login.succeeded']);
      expect(logins.received[0].verifiedWith).toHaveLength(1);
      // Its own creation is written in the transaction that creates it: the first event it gets.
      expect(everything.received.map((x) => x.payload.type).sort()).toEqual(
        ['login.failed', 'login.succeeded', 'user.registered', 'webhook.created', 'webhook.created'].sort(),
      );
      expect(everything.ofType('webhook.created').map((x) => x.payload.data.details.webhookId)).toContain(all.id);
      expect(everything.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
    });

    it('connects to the address the name resolved to (here a name only the injected resolver knows)', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const url = r.url.replace('127.0.0.1', 'backend.receiver.test');
      await subscribe(realm, r, ['user.registered'], url);
      await register(t, uniqueEmail('named'), PASSWORD, realm);
      await dispatch();
      await r.waitFor((all) => all.length === 1);
      expect(r.received[0].verifiedWith).toHaveLength(1);
    });

    it('retries with backoff and keeps one webhook-id across attempts', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const hook = await subscribe(realm, r, ['user.registered']);
      const answers = [500, 302, 204];
      r.answer = () => answers.shift() ?? 204;
      await register(t, uniqueEmail('retry'), PASSWORD, realm);

      await dispatch();
      let [delivery] = await deliveries(realm, hook.id);
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500, lastError: 'answered 500' });
      await dispatch(); // not due before the first delay (5 s)
      expect(r.received).toHaveLength(1);
      t.clock.advance(5);
      await dispatch();
      [delivery] = await deliveries(realm, hook.id);
      expect(delivery).toMatchObject({ status: 'pending', attempts: 2, lastStatusCode: 302 });
      expect(delivery.lastError).toContain('redirect');
      t.clock.advance(60);
      await dispatch();
      [delivery] = await deliveries(realm, hook.id);
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 204, lastError: null });

      expect(r.received).toHaveLength(3);
      expect(new Set(r.received.map((x) => x.id))).toEqual(new Set([delivery.id]));
      expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
      expect(new Set(r.received.map((x) => x.body)).size).toBe(1);
    });

    it('gives a receiver that was down everything once it is back', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const hook = await subscribe(realm, r, ['*']);
      await r.down();
      const emails = [uniqueEmail('down'), uniqueEmail('down'), uniqueEmail('down')];
      for (const email of emails) await register(t, email, PASSWORD, realm);
      await dispatch();
      const waiting = await deliveries(realm, hook.id, '?status=pending');
      expect(waiting).toHaveLength(3);
      expect(waiting.every((d) => d.attempts === 1 && d.lastStatusCode === null && d.lastError)).toBe(true);
      await r.up();
      t.clock.advance(5);
      await dispatch();
      await r.waitFor((all) => all.length === 3);
      expect(r.received.every((x) => x.verifiedWith.length === 1)).toBe(true);
      expect(new Set(r.received.map((x) => x.id))).toEqual(new Set(waiting.map((d) => d.id)));
      expect((await deliveries(realm, hook.id, '?status=delivered')).length).toBe(3);
    });

    it('ends failed after the schedule, shows it on /health/ready, and a manual retry delivers it with the same id', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const hook = await subscribe(realm, r, ['user.registered']);
      r.answer = () => 500;
      await register(t, uniqueEmail('doomed'), PASSWORD, realm);
      await dispatch();
      t.clock.advance(5);
      await dispatch();
      t.clock.advance(60);
      await dispatch();
      t.clock.advance(3600);
      await dispatch(); // nothing after the last attempt
      expect(r.received).toHaveLength(3);
      const [failed] = await deliveries(realm, hook.id, '?status=failed');
      expect(failed).toMatchObject({ status: 'failed', attempts: 3, lastStatusCode: 500, nextAttemptAt: null });
      expect(await deliveries(realm, hook.id, '?status=pending')).toEqual([]);

      const ready = await t.api().get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.checks['webhooks.failed']).toEqual({ ok: false, detail: expect.any(Number) });
      expect(ready.body.checks['webhooks.failed'].detail).toBeGreaterThanOrEqual(1);

      r.answer = () => 200;
      const retried = await admin(realm).post(`/webhooks/${hook.id}/deliveries/${failed.id}/retry`);
      expect(retried.status).toBe(202);
      expect(retried.body.delivery).toMatchObject({ id: failed.id, status: 'pending' });
      await dispatch();
      await r.waitFor((all) => all.length === 4);
      expect(r.received[3]).toMatchObject({ id: failed.id });
      expect(r.received[3].verifiedWith).toHaveLength(1);
      expect((await deliveries(realm, hook.id))[0]).toMatchObject({ id: failed.id, status: 'delivered', lastStatusCode: 200 });

      // Only a failed delivery can be retried; unknown deliveries are 404.
      const again = await admin(realm).post(`/webhooks/${hook.id}/deliveries/${failed.id}/retry`);
      expect(again.status).toBe(400);
      expect(again.body.error.code).toBe('VALIDATION_FAILED');
      const unknown = await admin(realm).post(`/webhooks/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`);
      expect(unknown.status).toBe(404);
    });

    it('disables the webhook when the receiver answers 410 Gone, and sends it nothing more', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const hook = await subscribe(realm, r, ['user.registered']);
      r.answer = () => 410;
      await register(t, uniqueEmail('gone'), PASSWORD, realm);
      await dispatch();
      await r.waitFor((all) => all.length === 1);
      const got = await admin(realm).get(`/webhooks/${hook.id}`);
      expect(got.body.webhook.enabled).toBe(false);
      expect((await deliveries(realm, hook.id))[0]).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 410 });
      const audited = await storedEvents(t, realm, { type: 'webhook.updated' });
      expect(audited).toEqual([
        expect.objectContaining({ actor_id: null, details: { webhookId: hook.id, changed: ['enabled'], reason: 'gone' } }),
      ]);

      await register(t, uniqueEmail('gone'), PASSWORD, realm);
      t.clock.advance(3600);
      await dispatch();
      expect(r.received).toHaveLength(1);
      expect(await deliveries(realm, hook.id)).toHaveLength(1);
    });

    it('signs with both secrets during the overlap after a rotation, then with the new one only', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const hook = await subscribe(realm, r, ['user.registered']);
      const rotated = await admin(realm).post(`/webhooks/${hook.id}/rotate-secret`);
      expect(rotated.status).toBe(200);
      const fresh = rotated.body.webhook.secret as string;
      expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(fresh).not.toBe(hook.secret);
      expect(rotated.body.webhook).toMatchObject({ id: hook.id, url: hook.url, enabled: true });
      r.secrets = [hook.secret, fresh];

      await register(t, uniqueEmail('overlap'), PASSWORD, realm);
      await dispatch();
      await r.waitFor((all) => all.length === 1);
      expect(r.received[0].signature.split(' ')).toHaveLength(2);
      // Each secret alone verifies it: receivers may switch over at any time during the overlap.
      expect(r.received[0].verifiedWith.sort()).toEqual([hook.secret, fresh].sort());

      t.clock.advance(t.config.webhookSecretOverlapSeconds + 1);
      await register(t, uniqueEmail('overlap'), PASSWORD, realm);
      await dispatch();
      await r.waitFor((all) => all.length === 2);
      expect(r.received[1].signature.split(' ')).toHaveLength(1);
      expect(r.received[1].verifiedWith).toEqual([fresh]);

      const audited = await storedEvents(t, realm, { type: 'webhook.secret_rotated' });
      expect(audited).toHaveLength(1);
      expect(JSON.stringify(audited)).not.toContain(fresh.slice(6));
    });

    it('sends nothing to a disabled webhook and resumes once it is enabled again', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const hook = await subscribe(realm, r, ['user.registered']);
      const off = await admin(realm).patch(`/webhooks/${hook.id}`).send({ enabled: false });
      expect(off.status).toBe(200);
      expect(off.body.webhook).toMatchObject({ id: hook.id, enabled: false });
      expect(off.body.webhook.secret).toBeUndefined();
      await register(t, uniqueEmail('off'), PASSWORD, realm);
      await dispatch();
      expect(r.received).toHaveLength(0);
      expect(await deliveries(realm, hook.id)).toEqual([]);

      expect((await admin(realm).patch(`/webhooks/${hook.id}`).send({ enabled: true })).status).toBe(200);
      await register(t, uniqueEmail('on'), PASSWORD, realm);
      await dispatch();
      await r.waitFor((all) => all.length === 1);
      const changes = await storedEvents(t, realm, { type: 'webhook.updated' });
      expect(changes.map((e) => e.details)).toEqual([
        { webhookId: hook.id, changed: ['enabled'] },
        { webhookId: hook.id, changed: ['enabled'] },
      ]);
    });

    it('drops the pending deliveries of a deleted webhook and sends it nothing', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const hook = await subscribe(realm, r, ['user.registered']);
      await r.down();
      await register(t, uniqueEmail('deleted'), PASSWORD, realm);
      await dispatch();
      expect(await deliveries(realm, hook.id, '?status=pending')).toHaveLength(1);
      const removed = await admin(realm).delete(`/webhooks/${hook.id}`);
      expect(removed.status).toBe(200);
      expect(removed.body).toEqual({ success: true });
      const rows: unknown[] = await t.dataSource.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1`, [hook.id]);
      expect(rows).toEqual([]);
      await r.up();
      await register(t, uniqueEmail('deleted'), PASSWORD, realm);
      t.clock.advance(3600);
      await dispatch();
      expect(r.received).toHaveLength(0);
      expect((await admin(realm).get(`/webhooks/${hook.id}`)).body.error.code).toBe('WEBHOOK_NOT_FOUND');
      expect(await storedEvents(t, realm, { type: 'webhook.deleted' })).toEqual([
        expect.objectContaining({ details: { webhookId: hook.id } }),
      ]);
    });
  });

  describe('admin routes', () => {
    it('lists and shows webhooks without their secrets, stores the secret encrypted, and audits the creation', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const hook = await subscribe(realm, r, ['user.deleted', 'session.flagged', 'user.deleted']);
      expect(hook.events).toEqual(['user.deleted', 'session.flagged']);
      const list = await admin(realm).get('/webhooks');
      expect(list.status).toBe(200);
      expect(list.body).toEqual({
        webhooks: [
          {
            id: hook.id,
            url: r.url,
            events: ['user.deleted', 'session.flagged'],
            description: 'test receiver',
            enabled: true,
            createdAt: expect.any(String),
          },
        ],
      });
      const one = await admin(realm).get(`/webhooks/${hook.id}`);
      expect(one.body).toEqual({ webhook: list.body.webhooks[0] });
      const [row]: { secret: string }[] = await t.dataSource.query(`SELECT secret FROM webhooks WHERE id = $1`, [hook.id]);
      expect(row.secret).not.toContain(hook.secret.slice(6, 20));
      const [created] = await storedEvents(t, realm, { type: 'webhook.created' });
      expect(created.details).toEqual({ webhookId: hook.id, host: new URL(r.url).host, events: ['user.deleted', 'session.flagged'] });
      expect(created.actor_id).toEqual(expect.any(String));
    });

    it('changes url, events and description with PATCH, auditing the changed fields', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const other = await receiver();
      const hook = await subscribe(realm, r, ['user.registered']);
      const res = await admin(realm)
        .patch(`/webhooks/${hook.id}`)
        .send({ url: other.url, events: ['*'], description: null });
      expect(res.status).toBe(200);
      expect(res.body.webhook).toMatchObject({ url: other.url, events: ['*'], description: null, enabled: true });
      other.secrets = [hook.secret];
      await register(t, uniqueEmail('moved'), PASSWORD, realm);
      await dispatch();
      await other.waitFor((all) => all.some((x) => x.payload.type === 'user.registered'));
      expect(r.received).toHaveLength(0);
      expect(other.ofType('user.registered')[0].verifiedWith).toEqual([hook.secret]);
      const [updated] = await storedEvents(t, realm, { type: 'webhook.updated' });
      expect(updated.details).toEqual({ webhookId: hook.id, changed: ['url', 'events', 'description'] });
    });

    it('refuses invalid input with 400 VALIDATION_FAILED and details', async () => {
      const realm = await freshRealm();
      const r = await receiver();
      const bad: Record<string, unknown>[] = [
        { url: 'ftp://example.com/x', events: ['user.registered'] },
        { url: 'not a url', events: ['user.registered'] },
        { url: 'http://user:pass@127.0.0.1:9/x', events: ['user.registered'] },
        { url: r.url, events: [] },
        { url: r.url, events: ['user.exploded'] },
        { url: r.url, events: ['*', 'login.failed'] },
        { url: r.url, events: 'user.registered' },
        { url: r.url },
        { events: ['user.registered'] },
        { url: r.url, events: ['user.registered'], secret: 'whsec_mine' },
        { url: r.url, events: ['user.registered'], description: 'x'.repeat(501) },
        { url: 'http://nowhere.invalid/x', events: ['user.registered'] },
      ];
      for (const body of bad) {
        const res = await admin(realm).post('/webhooks').send(body);
        expect({ body, status: res.status, code: res.body.error?.code }).toEqual({ body, status: 400, code: 'VALIDATION_FAILED' });
        expect(res.body.error.details.length).toBeGreaterThan(0);
      }
      const hook = await subscribe(realm, r, ['user.registered']);
      for (const body of [{ events: [] }, { enabled: 'yes' }, { url: 'ftp://example.com' }, { secret: 'x' }]) {
        const res = await admin(realm).patch(`/webhooks/${hook.id}`).send(body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
      }
      expect((await admin(realm).get(`/webhooks/${hook.id}/deliveries?status=lost`)).status).toBe(400);
      expect((await admin(realm).get(`/webhooks/${hook.id}/deliveries?limit=101`)).status).toBe(400);
      expect((await admin(realm).get('/webhooks')).body.webhooks).toHaveLength(1);
    });

    it('answers 404 WEBHOOK_NOT_FOUND for unknown ids and for ids of another realm (realm isolation)', async () => {
      const realmA = await freshRealm();
      const realmB = await freshRealm();
      const a = await receiver();
      const hook = await subscribe(realmA, a, ['*']);
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const [realm, id] of [
        [realmA, unknown],
        [realmA, 'not-a-uuid'],
        [realmB, hook.id],
      ]) {
        const calls = [
          admin(realm).get(`/webhooks/${id}`),
          admin(realm).patch(`/webhooks/${id}`).send({ enabled: false }),
          admin(realm).delete(`/webhooks/${id}`),
          admin(realm).post(`/webhooks/${id}/rotate-secret`),
          admin(realm).get(`/webhooks/${id}/deliveries`),
          admin(realm).post(`/webhooks/${id}/deliveries/${unknown}/retry`),
        ];
        for (const res of await Promise.all(calls)) {
          expect(res.status).toBe(404);
          expect(res.body.error.code).toBe('WEBHOOK_NOT_FOUND');
        }
      }
      expect((await admin(realmB).get('/webhooks')).body.webhooks).toEqual([]);
      // Events of realm B never reach realm A's webhook.
      await register(t, uniqueEmail('isolated'), PASSWORD, realmB);
      await dispatch();
      expect(a.received.filter((x) => x.payload.data.realmId !== realmA)).toEqual([]);
      expect((await admin(realmA).get(`/webhooks/${hook.id}`)).body.webhook.enabled).toBe(true);
    });

    it('is for the realm-admins of the realm and super-admins only', async () => {
      const realm = await freshRealm();
      const otherRealm = await freshRealm();
      const r = await receiver();
      const realmAdmin = await createUser(t, root, realm, { roles: ['realm-admin'] });
      const otherAdmin = await createUser(t, root, otherRealm, { roles: ['realm-admin'] });
      const member = await signedInUser(t, realm);

      const asRealmAdmin = await admin(realm, realmAdmin.accessToken)
        .post('/webhooks')
        .send({ url: r.url, events: ['*'] });
      expect(asRealmAdmin.status).toBe(201);
      const id = asRealmAdmin.body.webhook.id;
      expect((await admin(realm, realmAdmin.accessToken).get(`/webhooks/${id}/deliveries`)).status).toBe(200);
      for (const token of [member.accessToken, otherAdmin.accessToken]) {
        for (const res of [
          await admin(realm, token).get('/webhooks'),
          await admin(realm, token)
            .post('/webhooks')
            .send({ url: r.url, events: ['*'] }),
          await admin(realm, token).get(`/webhooks/${id}`),
          await admin(realm, token).post(`/webhooks/${id}/rotate-secret`),
          await admin(realm, token).delete(`/webhooks/${id}`),
        ]) {
          expect(res.status).toBe(403);
          expect(res.body.error.code).toBe('FORBIDDEN');
        }
      }
      const anonymous = await t.api().get('/v1/admin/webhooks').set('X-Realm-Id', realm);
      expect(anonymous.status).toBe(401);
      const noRealm = await t
        .api()
        .get('/v1/admin/webhooks')
        .set(...bearer(root));
      expect(noRealm.status).toBe(400);
      expect((await admin(realm).get(`/webhooks/${id}`)).status).toBe(200);
    });
  });
});
