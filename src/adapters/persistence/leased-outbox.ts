import { DataSource } from 'typeorm';
import { Clock } from '../../application/ports/clock';
import { unwrapRows } from './typeorm-transaction';

export interface LeasedOutboxOptions {
  /** The table: columns `id`, `status` ('pending' while due), `attempts`, `next_attempt_at`, `locked_until`. */
  table: string;
  /** Further columns the claim returns, as `o.<column>` (the table's alias is `o`). */
  columns: string[];
  leaseSeconds: () => number;
  /** A further condition a due row must meet, over the alias `o` (no parameters). */
  dueFilter?: string;
}

/** A row reserved for one dispatcher until `leaseUntil`. */
export interface Lease {
  id: string;
  /** Attempts including this one. */
  attempts: number;
  leaseUntil: Date;
}

/**
 * The database half of an outbox (email, webhook deliveries): rows are claimed one at a time
 * with `FOR UPDATE SKIP LOCKED` and reserved by a lease (`locked_until`), so dispatchers of
 * several instances never take the same row, and a crash between claim and send leaves the row
 * reserved until the lease runs out, after which it is due again. The outcome of an attempt is
 * stored only while the dispatcher still holds the lease: a dispatcher that wakes up late never
 * overwrites what another did since.
 */
export class LeasedOutbox<Row extends Record<string, unknown>> {
  constructor(
    private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly options: LeasedOutboxOptions,
  ) {}

  /**
   * Reserves the oldest due row for this dispatcher, counting the attempt; null when none is
   * due. One statement: rows another dispatcher holds locked are skipped, rows it holds leased are not due.
   */
  async claim(): Promise<(Row & Lease) | null> {
    const { table, columns, dueFilter } = this.options;
    const now = this.clock.now();
    const leaseUntil = new Date(now.getTime() + this.options.leaseSeconds() * 1000);
    const rows = unwrapRows<Row & { id: string; attempts: number }>(
      await this.dataSource.query(
        `WITH next AS (
           SELECT o.id FROM ${table} o
            WHERE o.status = 'pending' AND o.next_attempt_at <= $1 AND (o.locked_until IS NULL OR o.locked_until <= $1)
              ${dueFilter ? `AND ${dueFilter}` : ''}
            ORDER BY o.next_attempt_at
            LIMIT 1
            FOR UPDATE OF o SKIP LOCKED
         )
         UPDATE ${table} o SET locked_until = $2, attempts = o.attempts + 1
           FROM next WHERE o.id = next.id
         RETURNING o.id, o.attempts${columns.length ? `, ${columns.join(', ')}` : ''}`,
        [now, leaseUntil],
      ),
    );
    const row = rows[0];
    if (!row) return null;
    return { ...row, attempts: Number(row.attempts), leaseUntil };
  }

  /**
   * Stores the outcome of an attempt and releases the lease: `set` is the SET list (its
   * parameters from `$3`), e.g. `status = 'sent', sent_at = $3`. Does nothing, and returns
   * false, when this dispatcher no longer holds the lease.
   */
  async settle(lease: Lease, set: string, params: unknown[] = []): Promise<boolean> {
    const result: unknown = await this.dataSource.query(
      `UPDATE ${this.options.table} SET ${set}, locked_until = NULL
        WHERE id = $1 AND status = 'pending' AND locked_until = $2 RETURNING id`,
      [lease.id, lease.leaseUntil, ...params],
    );
    return unwrapRows(result as unknown[]).length > 0;
  }
}
