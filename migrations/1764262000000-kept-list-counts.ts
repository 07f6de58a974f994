import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Kept counts for the totals of the administrative lists that would otherwise count a whole
 * realm: users per realm, audit events per realm and type, open (not revoked) sessions per realm,
 * webhook deliveries per webhook and status. Counting 800,000 index entries takes longer than the
 * rest of a list request many times over; the kept count is a sum over a few rows.
 *
 * Statement triggers with transition tables add each statement's inserted and deleted rows, so a
 * bulk insert or a purge batch writes one counter row per key, not one per row. A row trigger,
 * called only when its WHEN clause holds, moves a row between keys (a session revoked, a delivery
 * delivered); a refresh, which updates its session without touching revoked_at, never calls it.
 * The counters sit in the same transaction as the rows they count: a list's statement sees both
 * or neither, and the total stays exact. Each server connection writes to its own slot (its
 * backend pid modulo 16), so concurrent sign-ups in one realm do not queue on one counter row.
 *
 * The backfill counts the tables once while the new triggers hold off other writers to them
 * (CREATE TRIGGER takes a SHARE ROW EXCLUSIVE lock; reads go on): about a second per million
 * rows here, see docs/operations.md.
 */
export class KeptListCounts1764262000000 implements MigrationInterface {
  name = 'KeptListCounts1764262000000';

  async up(q: QueryRunner): Promise<void> {
    for (const kept of KEPT) {
      const keys = kept.keys.map(([column]) => column).join(', ');
      const where = (row: string) => (kept.where ? `WHERE ${kept.where(row)}` : '');
      const add = (sign: string) =>
        `INSERT INTO ${kept.counts} AS c (${keys}, slot, n)
           SELECT ${keys}, pg_backend_pid() % 16, ${sign}count(*) FROM counted_rows ${where('counted_rows')} GROUP BY ${keys} ORDER BY ${keys}
           ON CONFLICT (${keys}, slot) DO UPDATE SET n = c.n + excluded.n;`;
      await q.query(`
        CREATE TABLE ${kept.counts} (
          ${kept.keys.map(([column, type]) => `${column} ${type} NOT NULL,`).join(' ')}
          slot smallint NOT NULL,
          n bigint NOT NULL,
          PRIMARY KEY (${keys}, slot)
        );
        CREATE FUNCTION ${kept.counts}_add() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF TG_OP = 'INSERT' THEN ${add('')}
          ELSIF TG_OP = 'DELETE' THEN ${add('-')}
          ELSE DELETE FROM ${kept.counts};
          END IF;
          RETURN NULL;
        END $$;
        CREATE TRIGGER ${kept.counts}_insert AFTER INSERT ON ${kept.table}
          REFERENCING NEW TABLE AS counted_rows FOR EACH STATEMENT EXECUTE FUNCTION ${kept.counts}_add();
        CREATE TRIGGER ${kept.counts}_delete AFTER DELETE ON ${kept.table}
          REFERENCING OLD TABLE AS counted_rows FOR EACH STATEMENT EXECUTE FUNCTION ${kept.counts}_add();
        CREATE TRIGGER ${kept.counts}_truncate AFTER TRUNCATE ON ${kept.table} FOR EACH STATEMENT EXECUTE FUNCTION ${kept.counts}_add();
        INSERT INTO ${kept.counts} (${keys}, slot, n) SELECT ${keys}, 0, count(*) FROM ${kept.table} ${where(kept.table)} GROUP BY ${keys};
      `);
      if (kept.moved) {
        const values = (row: string) => `${kept.keys.map(([column]) => `${row}.${column}`).join(', ')}, pg_backend_pid() % 16`;
        await q.query(`
          CREATE FUNCTION ${kept.counts}_move() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            INSERT INTO ${kept.counts} AS c (${keys}, slot, n)
              SELECT * FROM (VALUES (${values('OLD')}, -1), (${values('NEW')}, 1)) AS moved (${keys}, slot, n)
              WHERE ${kept.where ? `CASE WHEN moved.n < 0 THEN ${kept.where('OLD')} ELSE ${kept.where('NEW')} END` : 'true'}
              ON CONFLICT (${keys}, slot) DO UPDATE SET n = c.n + excluded.n;
            RETURN NULL;
          END $$;
          CREATE TRIGGER ${kept.counts}_move AFTER UPDATE OF ${kept.moved.columns} ON ${kept.table}
            FOR EACH ROW WHEN (${kept.moved.when}) EXECUTE FUNCTION ${kept.counts}_move();
        `);
      }
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const kept of [...KEPT].reverse()) {
      await q.query(`
        ${kept.moved ? `DROP TRIGGER ${kept.counts}_move ON ${kept.table}; DROP FUNCTION ${kept.counts}_move();` : ''}
        DROP TRIGGER ${kept.counts}_truncate ON ${kept.table};
        DROP TRIGGER ${kept.counts}_delete ON ${kept.table};
        DROP TRIGGER ${kept.counts}_insert ON ${kept.table};
        DROP FUNCTION ${kept.counts}_add();
        DROP TABLE ${kept.counts};
      `);
    }
  }
}

interface KeptCount {
  /** The table whose rows are counted. */
  table: string;
  /** The table of counters: the key columns, a slot and `n`. */
  counts: string;
  keys: [column: string, type: string][];
  /** Only rows meeting this condition (on the row named `row`) are counted. */
  where?: (row: string) => string;
  /** An update that moves a row between keys (or in or out of `where`). */
  moved?: { columns: string; when: string };
}

const KEPT: KeptCount[] = [
  { table: 'users', counts: 'realm_user_counts', keys: [['realm_id', 'text']] },
  {
    table: 'audit_events',
    counts: 'audit_event_counts',
    keys: [
      ['realm_id', 'text'],
      ['type', 'text'],
    ],
  },
  {
    table: 'sessions',
    counts: 'realm_session_counts',
    keys: [['realm_id', 'text']],
    where: (row) => `${row}.revoked_at IS NULL`,
    moved: { columns: 'revoked_at', when: '(OLD.revoked_at IS NULL) <> (NEW.revoked_at IS NULL)' },
  },
  {
    table: 'webhook_deliveries',
    counts: 'webhook_delivery_counts',
    keys: [
      ['webhook_id', 'uuid'],
      ['status', 'text'],
    ],
    moved: { columns: 'webhook_id, status', when: 'OLD.webhook_id <> NEW.webhook_id OR OLD.status <> NEW.status' },
  },
];
