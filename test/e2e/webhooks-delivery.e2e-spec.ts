import { DataSource } from 'typeorm';
import { AuditLog } from '../../src/application/ports/audit-log';
import { Clock } from '../../src/application/ports/clock';
import { ResolvedAddress } from '../../src/application/ports/host-resolver';
import { Transaction } from '../../src/application/ports/transaction';
import { WebhookTargetPolicy } from '../../src/application/ports/webhook-target-policy';
import { PrometheusMetrics } from '../../src/adapters/metrics/prometheus-metrics';
import { TypeOrmWebhookRepository } from '../../src/adapters/persistence/typeorm-webhook.repository';
import { WebhookDispatcher } from '../../src/adapters/webhooks/webhook-dispatcher';
import { AppConfig } from '../../src/config/app-config';
import { ADMIN_ENV, adminApi, createRealm, superAdmin } from '../support/admin-flows';
import { PASSWORD, register, uniqueEmail } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Webhook delivery under crashes and concurrency, in the style of the email outbox tests: a
 * dispatcher that dies between claim and send loses nothing (its lease runs out and another
 * sends), and dispatchers of several instances on one database send each attempt once.
 */

const ENV = { ...ADMIN_ENV, WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
let realmCounter = 0;

async function realmWithWebhook(t: TestApp, receiver: WebhookReceiver): Promise<string> {
  realmCounter += 1;
  const realm = `whd-${Date.now().toString(36)}-${realmCounter}`;
  const root = (await superAdmin(t)).accessToken;
  await createRealm(t, root, realm);
  const res = await adminApi(t, root, realm)
    .post('/webhooks')
    .send({ url: receiver.url, events: ['user.registered'] });
  expect(res.status).toBe(201);
  receiver.secrets = [res.body.webhook.secret];
  return realm;
}

/** A further dispatcher on the same database, as another instance would run it. */
function anotherDispatcher(t: TestApp, policy: WebhookTargetPolicy = t.app.get(WebhookTargetPolicy)): WebhookDispatcher {
  return new WebhookDispatcher(
    t.app.get(DataSource),
    t.app.get(TypeOrmWebhookRepository),
    policy,
    t.app.get(AuditLog),
    t.app.get(Transaction),
    t.app.get(PrometheusMetrics),
    t.app.get(Clock),
    t.app.get(AppConfig),
  );
}

/** Every request verified, and each delivery id received exactly once. */
function expectEachOnce(receiver: WebhookReceiver, count: number): void {
  expect(receiver.received.every((r) => r.verifiedWith.length === 1)).toBe(true);
  const ids = receiver.received.map((r) => r.id);
  expect(ids).toHaveLength(count);
  expect(new Set(ids).size).toBe(count);
}

describe('webhooks: crash and concurrency', () => {
  let t: TestApp;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: ENV });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.down()));
    await t?.close();
  });
  beforeEach(async () => {
    await t.app.get(WebhookDispatcher).dispatchDue();
  });

  async function receiver() {
    const r = await WebhookReceiver.start();
    receivers.push(r);
    return r;
  }

  it('loses nothing when a dispatcher dies between claim and send: the lease runs out and another sends it', async () => {
    const r = await receiver();
    const realm = await realmWithWebhook(t, r);
    for (let i = 0; i < 8; i += 1) await register(t, uniqueEmail('crash'), PASSWORD, realm);

    // Instance A sends two deliveries, then freezes after claiming — as if killed mid-pass.
    const real = t.app.get(WebhookTargetPolicy);
    let passed = 0;
    const frozen: ((error: Error) => void)[] = [];
    const dying: WebhookTargetPolicy = {
      check: (url: string): Promise<ResolvedAddress> => {
        if (passed < 2) {
          passed += 1;
          return real.check(url);
        }
        return new Promise<ResolvedAddress>((_, reject) => frozen.push(reject));
      },
    };
    const a = anotherDispatcher(t, dying);
    const aPass = a.dispatchDue();
    const deadline = Date.now() + 10_000;
    while (frozen.length < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(frozen).toHaveLength(4); // every worker of A holds a claimed delivery

    const b = t.app.get(WebhookDispatcher);
    expect(await b.dispatchDue()).toEqual({ delivered: 2, retrying: 0, failed: 0 }); // the unclaimed rest
    expect(await b.dispatchDue()).toEqual({ delivered: 0, retrying: 0, failed: 0 }); // A's four are leased
    const rows: { locked_until: Date | null }[] = await t.dataSource.query(
      `SELECT locked_until FROM webhook_deliveries WHERE realm_id = $1 AND status = 'pending'`,
      [realm],
    );
    expect(rows).toHaveLength(4);
    t.clock.advance(Math.max(t.config.outboxLeaseSeconds, (2 * t.config.webhookTimeoutMs) / 1000) + 1);
    expect(await b.dispatchDue()).toEqual({ delivered: 4, retrying: 0, failed: 0 });
    await r.waitFor((all) => all.length === 8);
    expectEachOnce(r, 8);

    // A wakes up late: its stale outcome must not touch rows it no longer holds, and it sends nothing.
    for (const reject of frozen) reject(new Error('connection reset'));
    await aPass;
    const statuses: { status: string; attempts: number }[] = await t.dataSource.query(
      `SELECT status, attempts FROM webhook_deliveries WHERE realm_id = $1`,
      [realm],
    );
    expect(statuses.map((s) => s.status)).toEqual(Array(8).fill('delivered'));
    expect(r.received).toHaveLength(8);
    await a.drain();
  });

  it('sends each delivery exactly once when several dispatchers run at the same time', async () => {
    const r = await receiver();
    const realm = await realmWithWebhook(t, r);
    for (let i = 0; i < 30; i += 1) await register(t, uniqueEmail('race'), PASSWORD, realm);
    const dispatchers = [t.app.get(WebhookDispatcher), anotherDispatcher(t), anotherDispatcher(t)];
    const reports = await Promise.all(dispatchers.map((d) => d.dispatchDue()));
    expect(reports.reduce((sum, report) => sum + report.delivered, 0)).toBe(30);
    await r.waitFor((all) => all.length === 30);
    expectEachOnce(r, 30);
  });
});

describe('webhooks: a second instance on the same PostgreSQL database', () => {
  const onServer = process.env.DATABASE_URL ? it : it.skip;
  let first: TestApp | undefined;
  let second: TestApp | undefined;
  let r: WebhookReceiver;

  beforeAll(async () => {
    r = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await r?.down();
  });

  onServer('two app instances dispatching at once send each delivery exactly once', async () => {
    first = await createTestApp({ env: ENV });
    second = await createTestApp({ env: ENV, database: first.database });
    const realm = await realmWithWebhook(first, r);
    for (let i = 0; i < 15; i += 1) await register(i % 2 ? first : second, uniqueEmail('twin'), PASSWORD, realm);
    const reports = await Promise.all([first.app.get(WebhookDispatcher).dispatchDue(), second.app.get(WebhookDispatcher).dispatchDue()]);
    expect(reports[0].delivered + reports[1].delivered).toBe(15);
    await r.waitFor((all) => all.length === 15);
    expectEachOnce(r, 15);
  });
});
