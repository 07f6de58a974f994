import { AdminActor } from '../../../src/application/admin/admin-actor';
import { CreateWebhookUseCase } from '../../../src/application/webhooks/create-webhook.use-case';
import { DeleteWebhookUseCase } from '../../../src/application/webhooks/delete-webhook.use-case';
import { GetWebhookUseCase } from '../../../src/application/webhooks/get-webhook.use-case';
import { ListWebhookDeliveriesUseCase } from '../../../src/application/webhooks/list-webhook-deliveries.use-case';
import { ListWebhooksUseCase } from '../../../src/application/webhooks/list-webhooks.use-case';
import { RetryWebhookDeliveryUseCase } from '../../../src/application/webhooks/retry-webhook-delivery.use-case';
import { RotateWebhookSecretUseCase } from '../../../src/application/webhooks/rotate-webhook-secret.use-case';
import { UpdateWebhookUseCase } from '../../../src/application/webhooks/update-webhook.use-case';
import { WebhookDelivery, WebhookDeliveryStatus } from '../../../src/domain/webhook/webhook';
import { useCaseFixture } from './fixture';

const actor: AdminActor = { id: 'admin-1', realmId: 'default', superAdmin: false, hidesSuperAdmins: false, ip: '198.51.100.2' };

function webhooks() {
  const f = useCaseFixture();
  const create = f.build(CreateWebhookUseCase);
  return {
    ...f,
    create: (input: Partial<Parameters<CreateWebhookUseCase['execute']>[0]> = {}) =>
      create.execute({ actor, realmId: 'default', url: 'https://hooks.example.com/in', events: ['user.registered'], ...input }),
    update: f.build(UpdateWebhookUseCase),
    rotate: f.build(RotateWebhookSecretUseCase),
    remove: f.build(DeleteWebhookUseCase),
    get: f.build(GetWebhookUseCase),
    list: f.build(ListWebhooksUseCase),
    deliveries: f.build(ListWebhookDeliveriesUseCase),
    retry: f.build(RetryWebhookDeliveryUseCase),
  };
}

function aDelivery(webhookId: string, status: WebhookDeliveryStatus, createdAt: Date): WebhookDelivery {
  return {
    id: crypto.randomUUID(),
    webhookId,
    eventId: crypto.randomUUID(),
    type: 'user.registered',
    status,
    attempts: 3,
    lastStatusCode: 500,
    lastError: 'HTTP 500',
    lastAttemptAt: createdAt,
    nextAttemptAt: null,
    createdAt,
  };
}

describe('webhook administration', () => {
  it('creates a webhook with a new whsec_ secret, checked URL and events, audited without the secret', async () => {
    const f = webhooks();
    const created = await f.create({ events: ['user.registered', 'user.registered'], description: '  CRM  ' });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(created.snapshot()).toMatchObject({ events: ['user.registered'], description: 'CRM', enabled: true });
    expect(f.webhookTargets.checked).toEqual(['https://hooks.example.com/in']);
    expect((await f.get.execute({ realmId: 'default', id: created.id })).id).toBe(created.id);
    const audited = f.audit.entries.find((e) => e.type === 'webhook.created');
    expect(audited).toMatchObject({ actorId: 'admin-1', details: { webhookId: created.id, host: 'hooks.example.com' } });
    expect(JSON.stringify(audited)).not.toContain(created.secret);
  });

  it('refuses unknown events, "*" beside others, a private target and a plain-http URL, storing nothing', async () => {
    const f = webhooks();
    const field = (name: string) => ({ code: 'VALIDATION_FAILED', meta: { details: [expect.objectContaining({ field: name })] } });
    await expect(f.create({ events: ['no.such.event'] })).rejects.toMatchObject(field('events'));
    await expect(f.create({ events: ['*', 'user.registered'] })).rejects.toMatchObject(field('events'));
    await expect(f.create({ url: 'https://internal.example/hook' })).rejects.toMatchObject(field('url'));
    await expect(f.create({ url: 'http://hooks.example.com/in' })).rejects.toMatchObject(field('url'));
    await expect(f.create({ description: 'x'.repeat(501) })).rejects.toMatchObject(field('description'));
    expect(await f.list.execute({ realmId: 'default' })).toEqual([]);
  });

  it('updates only what changed, audits it, and re-checks a new URL', async () => {
    const f = webhooks();
    const created = await f.create();
    const same = await f.update.execute({ actor, realmId: 'default', id: created.id, events: ['user.registered'] });
    expect(same.events).toEqual(['user.registered']);
    expect(f.audit.types()).not.toContain('webhook.updated');
    f.clock.advance(10);
    const changed = await f.update.execute({
      actor,
      realmId: 'default',
      id: created.id,
      url: 'https://other.example.com/in',
      enabled: false,
    });
    expect(changed.snapshot()).toMatchObject({ url: 'https://other.example.com/in', enabled: false, updatedAt: f.clock.now() });
    expect(f.audit.entries.find((e) => e.type === 'webhook.updated')?.details).toEqual({
      webhookId: created.id,
      changed: ['url', 'enabled'],
    });
    await expect(f.update.execute({ actor, realmId: 'default', id: created.id, url: 'https://localhost/in' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    await expect(f.update.execute({ actor, realmId: 'master', id: created.id, enabled: true })).rejects.toMatchObject({
      code: 'WEBHOOK_NOT_FOUND',
    });
    expect((await f.get.execute({ realmId: 'default', id: created.id })).url).toBe('https://other.example.com/in');
  });

  it('rotates the secret, the previous one signing beside it for the configured overlap', async () => {
    const f = webhooks();
    const created = await f.create();
    const rotated = await f.rotate.execute({ actor, realmId: 'default', id: created.id });
    expect(rotated.secret).not.toBe(created.secret);
    const stored = await f.get.execute({ realmId: 'default', id: created.id });
    expect(stored.signingSecrets(f.clock.now())).toEqual([rotated.secret, created.secret]);
    f.clock.advance(f.config.webhookSecretOverlapSeconds);
    expect(stored.signingSecrets(f.clock.now())).toEqual([rotated.secret]);
    expect(f.audit.entries.at(-1)).toMatchObject({
      type: 'webhook.secret_rotated',
      details: { previousSecretValidSeconds: f.config.webhookSecretOverlapSeconds },
    });
    await expect(f.rotate.execute({ actor, realmId: 'master', id: created.id })).rejects.toMatchObject({ code: 'WEBHOOK_NOT_FOUND' });
  });

  it('deletes a webhook with its deliveries, once', async () => {
    const f = webhooks();
    const created = await f.create();
    f.webhooks.addDelivery('default', aDelivery(created.id, 'failed', f.clock.now()));
    await f.remove.execute({ actor, realmId: 'default', id: created.id });
    await expect(f.get.execute({ realmId: 'default', id: created.id })).rejects.toMatchObject({ code: 'WEBHOOK_NOT_FOUND' });
    await expect(f.remove.execute({ actor, realmId: 'default', id: created.id })).rejects.toMatchObject({ code: 'WEBHOOK_NOT_FOUND' });
    expect(f.audit.types().filter((t) => t === 'webhook.deleted')).toHaveLength(1);
  });

  it('lists webhooks oldest first, and a webhook’s deliveries newest first by status', async () => {
    const f = webhooks();
    const first = await f.create();
    f.clock.advance(1);
    const second = await f.create({ url: 'https://two.example.com/in' });
    expect((await f.list.execute({ realmId: 'default' })).map((w) => w.id)).toEqual([first.id, second.id]);
    const older = aDelivery(first.id, 'failed', new Date(f.clock.now().getTime() - 2000));
    const newer = aDelivery(first.id, 'delivered', f.clock.now());
    f.webhooks.addDelivery('default', older);
    f.webhooks.addDelivery('default', newer);
    const all = await f.deliveries.execute({ realmId: 'default', webhookId: first.id, page: 1, limit: 10 });
    expect([all.total, all.deliveries.map((d) => d.id)]).toEqual([2, [newer.id, older.id]]);
    const failed = await f.deliveries.execute({ realmId: 'default', webhookId: first.id, status: 'failed', page: 1, limit: 10 });
    expect(failed.deliveries.map((d) => d.id)).toEqual([older.id]);
    await expect(f.deliveries.execute({ realmId: 'master', webhookId: first.id, page: 1, limit: 10 })).rejects.toMatchObject({
      code: 'WEBHOOK_NOT_FOUND',
    });
  });

  it('retries a failed delivery, due now; refuses one that is not failed and one that does not exist', async () => {
    const f = webhooks();
    const created = await f.create();
    const failed = aDelivery(created.id, 'failed', f.clock.now());
    const delivered = aDelivery(created.id, 'delivered', f.clock.now());
    f.webhooks.addDelivery('default', failed);
    f.webhooks.addDelivery('default', delivered);
    f.clock.advance(30);
    const retried = await f.retry.execute({ realmId: 'default', webhookId: created.id, deliveryId: failed.id });
    expect(retried).toMatchObject({ id: failed.id, status: 'pending', nextAttemptAt: f.clock.now() });
    await expect(f.retry.execute({ realmId: 'default', webhookId: created.id, deliveryId: failed.id })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
    });
    await expect(f.retry.execute({ realmId: 'default', webhookId: created.id, deliveryId: delivered.id })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      meta: { details: [{ field: 'deliveryId', message: 'is delivered; only a failed delivery can be retried' }] },
    });
    await expect(f.retry.execute({ realmId: 'default', webhookId: created.id, deliveryId: crypto.randomUUID() })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });
});
