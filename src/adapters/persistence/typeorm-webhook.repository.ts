import { Injectable } from '@nestjs/common';
import { SecretCipher } from '../../application/ports/secret-cipher';
import { DeliveryQuery, WebhookDeliveryQueue, WebhookRepository } from '../../application/ports/webhook.repository';
import { ALL_EVENTS, Webhook, WebhookDelivery, WebhookDeliveryStatus } from '../../domain/webhook/webhook';
import { WebhookRecord } from './records/webhook.records';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';
import { isUuid } from './typeorm-user.repository';

/** How long an instance trusts its copy of a realm's subscriptions. */
export const SUBSCRIPTIONS_TTL_MS = 5000;

interface Subscription {
  id: string;
  all: boolean;
  events: ReadonlySet<string>;
}

const DELIVERY_COLUMNS = `id, webhook_id AS "webhookId", event_id AS "eventId", type, status, attempts,
  last_status_code AS "lastStatusCode", last_error AS "lastError", last_attempt_at AS "lastAttemptAt",
  next_attempt_at AS "nextAttemptAt", created_at AS "createdAt"`;

type DeliveryRow = Omit<WebhookDelivery, 'nextAttemptAt'> & { nextAttemptAt: Date };

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    webhookId: row.webhookId,
    eventId: row.eventId,
    type: row.type,
    status: row.status as WebhookDeliveryStatus,
    attempts: Number(row.attempts),
    lastStatusCode: row.lastStatusCode === null ? null : Number(row.lastStatusCode),
    lastError: row.lastError,
    lastAttemptAt: row.lastAttemptAt ? new Date(row.lastAttemptAt) : null,
    nextAttemptAt: row.status === 'pending' ? new Date(row.nextAttemptAt) : null,
    createdAt: new Date(row.createdAt),
  };
}

@Injectable()
export class TypeOrmWebhookRepository implements WebhookRepository, WebhookDeliveryQueue {
  /** Realm → its enabled webhooks' subscriptions, read at most every SUBSCRIPTIONS_TTL_MS. */
  private readonly subscriptions = new Map<string, { readAt: number; list: Promise<Subscription[]> }>();

  constructor(
    private readonly tx: TypeOrmTransaction,
    private readonly cipher: SecretCipher,
  ) {}

  async findById(realmId: string, id: string): Promise<Webhook | null> {
    if (!isUuid(id)) return null;
    const record = await this.tx.manager.getRepository(WebhookRecord).findOneBy({ realmId, id });
    return record ? this.toWebhook(record) : null;
  }

  async findByIdForUpdate(realmId: string, id: string): Promise<Webhook | null> {
    if (!isUuid(id)) return null;
    const record = await this.tx.manager
      .getRepository(WebhookRecord)
      .createQueryBuilder('w')
      .setLock('pessimistic_write')
      .where('w.realmId = :realmId AND w.id = :id', { realmId, id })
      .getOne();
    return record ? this.toWebhook(record) : null;
  }

  async list(realmId: string): Promise<Webhook[]> {
    const records = await this.tx.manager.getRepository(WebhookRecord).find({ where: { realmId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return Promise.all(records.map((record) => this.toWebhook(record)));
  }

  async save(webhook: Webhook): Promise<void> {
    const s = webhook.snapshot();
    const record: WebhookRecord = {
      id: s.id,
      realmId: s.realmId,
      url: s.url,
      events: s.events,
      description: s.description,
      enabled: s.enabled,
      secret: await this.cipher.encrypt(s.secret, s.id),
      previousSecret: s.previousSecret ? await this.cipher.encrypt(s.previousSecret, s.id) : null,
      previousSecretExpiresAt: s.previousSecretExpiresAt,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
    };
    await this.tx.manager.getRepository(WebhookRecord).upsert(record, ['id']);
    this.tx.afterCommit(() => this.forget(s.realmId));
  }

  async delete(realmId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return this.tx.run(async () => {
      const result = await this.tx.manager.getRepository(WebhookRecord).delete({ realmId, id });
      if (!result.affected) return false;
      await this.tx.manager.query(`DELETE FROM webhook_deliveries WHERE webhook_id = $1`, [id]);
      this.tx.afterCommit(() => this.forget(realmId));
      return true;
    });
  }

  async listDeliveries(query: DeliveryQuery): Promise<{ deliveries: WebhookDelivery[]; total: number }> {
    const params: unknown[] = [query.realmId, query.webhookId];
    // The realm is checked once, on the webhook: every delivery of a webhook is in its realm.
    let where = 'webhook_id = $2 AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = $2 AND w.realm_id = $1)';
    if (query.status) {
      params.push(query.status);
      where += ` AND status = $${params.length}`;
    }
    // The total is the webhook's kept count (per status; migration 1764262000000), not a count
    // over its deliveries: a busy webhook has hundreds of thousands within their retention.
    const [{ total }]: { total: string }[] = await this.tx.manager.query(
      `SELECT coalesce(sum(n), 0) AS total FROM webhook_delivery_counts WHERE ${where}`,
      params,
    );
    const rows: DeliveryRow[] = await this.tx.manager.query(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE ${where}
        ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, query.limit, (query.page - 1) * query.limit],
    );
    return { total: Number(total), deliveries: rows.map(toDelivery) };
  }

  async findDelivery(realmId: string, webhookId: string, deliveryId: string): Promise<WebhookDelivery | null> {
    if (!isUuid(deliveryId)) return null;
    const rows: DeliveryRow[] = await this.tx.manager.query(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE realm_id = $1 AND webhook_id = $2 AND id = $3`,
      [realmId, webhookId, deliveryId],
    );
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  async requeueFailedDelivery(realmId: string, webhookId: string, deliveryId: string, now: Date): Promise<WebhookDelivery | null> {
    if (!isUuid(deliveryId)) return null;
    const rows = unwrapRows<DeliveryRow>(
      await this.tx.manager.query(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $4, locked_until = NULL
          WHERE realm_id = $1 AND webhook_id = $2 AND id = $3 AND status = 'failed'
          RETURNING ${DELIVERY_COLUMNS}`,
        [realmId, webhookId, deliveryId, now],
      ),
    );
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  /**
   * Queues one delivery of an audit event to each enabled webhook of its realm subscribed to
   * its type, in the caller's batch or transaction (`TypeOrmTransaction.write`): nothing when
   * none is, one INSERT … SELECT otherwise. Which webhooks to consider comes from a short-lived
   * per-realm cache; the statement checks them again against the table, so a webhook disabled,
   * deleted or unsubscribed a moment ago gets nothing.
   */
  async queueDeliveries(event: { id: string; realmId: string; type: string; at: Date }): Promise<void> {
    const subscribed = (await this.subscriptionsOf(event.realmId)).filter((s) => s.all || s.events.has(event.type)).map((s) => s.id);
    if (subscribed.length === 0) return;
    await this.tx.write(
      `INSERT INTO webhook_deliveries (id, webhook_id, realm_id, event_id, type, status, attempts, next_attempt_at, created_at)
       SELECT gen_random_uuid(), w.id, w.realm_id, $1, $2, 'pending', 0, $3, $3 FROM webhooks w
        WHERE w.id = ANY($4::uuid[]) AND w.realm_id = $5 AND w.enabled AND ($2 = ANY(w.events) OR '${ALL_EVENTS}' = ANY(w.events))`,
      [event.id, event.type, event.at, subscribed, event.realmId],
    );
  }

  /** Drops this instance's copy of a realm's subscriptions (after a change made here). */
  forget(realmId: string): void {
    this.subscriptions.delete(realmId);
  }

  private subscriptionsOf(realmId: string): Promise<Subscription[]> {
    const cached = this.subscriptions.get(realmId);
    if (cached && performance.now() - cached.readAt < SUBSCRIPTIONS_TTL_MS) return cached.list;
    const list = this.tx.sharedReadManager
      .query(`SELECT id, events FROM webhooks WHERE realm_id = $1 AND enabled`, [realmId])
      .then((rows: { id: string; events: string[] }[]) =>
        rows.map((row) => ({ id: row.id, all: row.events.includes(ALL_EVENTS), events: new Set(row.events) })),
      );
    const entry = { readAt: performance.now(), list };
    this.subscriptions.set(realmId, entry);
    list.catch(() => {
      if (this.subscriptions.get(realmId) === entry) this.subscriptions.delete(realmId);
    });
    return list;
  }

  private async toWebhook(record: WebhookRecord): Promise<Webhook> {
    return Webhook.restore({
      id: record.id,
      realmId: record.realmId,
      url: record.url,
      events: record.events,
      description: record.description,
      enabled: record.enabled,
      secret: await this.cipher.decrypt(record.secret, record.id),
      previousSecret: record.previousSecret ? await this.cipher.decrypt(record.previousSecret, record.id) : null,
      previousSecretExpiresAt: record.previousSecretExpiresAt,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    });
  }
}
