import { WebhookRepository } from '../../src/application/ports/webhook.repository';
import { TypeOrmTransaction } from '../../src/adapters/persistence/typeorm-transaction';
import { Webhook } from '../../src/domain/webhook/webhook';
import { createTestApp, TestApp } from '../support/test-app';

const at = new Date('2026-11-25T12:00:00.000Z');

/**
 * A webhook's read-change-save (an update, a secret rotation, the disable on 410 Gone) holds the
 * row, on the database of the run: a delete waits for it instead of being undone by its save.
 */
describe('WebhookRepository.findByIdForUpdate', () => {
  let t: TestApp;
  let tx: TypeOrmTransaction;
  let webhooks: WebhookRepository;

  beforeAll(async () => {
    t = await createTestApp();
    tx = t.app.get(TypeOrmTransaction);
    webhooks = t.app.get(WebhookRepository);
  });
  afterAll(async () => t.close());

  async function aStoredWebhook(): Promise<Webhook> {
    const webhook = Webhook.create({
      id: crypto.randomUUID(),
      realmId: 'default',
      url: 'https://hooks.example.com/identity',
      events: ['*'],
      description: null,
      secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
      createdAt: at,
    });
    await webhooks.save(webhook);
    return webhook;
  }

  it('makes a delete wait for a change in flight, and the change does not bring the webhook back', async () => {
    const { id } = await aStoredWebhook();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => (locked = resolve));

    const change = tx.run(async () => {
      const webhook = (await webhooks.findByIdForUpdate('default', id))!;
      locked();
      await gate;
      webhook.update({ description: 'changed meanwhile' }, at);
      await webhooks.save(webhook);
    });
    await holding;
    let deleted: boolean | undefined;
    const removal = webhooks.delete('default', id).then((result) => (deleted = result));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(deleted).toBeUndefined(); // waiting for the change's transaction

    release();
    await change;
    await removal;
    expect(deleted).toBe(true);
    expect(await webhooks.findById('default', id)).toBeNull();
  });

  it('finds nothing once a delete has committed, and nothing of another realm', async () => {
    const { id } = await aStoredWebhook();
    expect(await tx.run(() => webhooks.findByIdForUpdate('master', id))).toBeNull();
    expect(await webhooks.delete('default', id)).toBe(true);
    expect(await tx.run(() => webhooks.findByIdForUpdate('default', id))).toBeNull();
  });
});
