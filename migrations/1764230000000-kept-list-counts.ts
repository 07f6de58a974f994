import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Kept counts for the totals of the administrative lists that would otherwise count a whole
 * realm: users per realm, audit events per realm and type. Counting 800,000 index entries takes
 * longer than the rest of a list request many times over; the kept count is a sum over a few rows.
 *
 * Statement triggers with transition tables add each statement's inserted and deleted rows, so a
 * bulk insert or a purge batch writes one counter row per realm (and type), not one per row. The
 * counters sit in the same transaction as the rows they count: a list's statement sees both or
 * neither, and the total stays exact. Each server connection writes to its own slot (its backend
 * pid modulo 16), so concurrent registrations in one realm do not queue on one counter row.
 *
 * The backfill counts the tables once while the new triggers hold off other writers to them
 * (CREATE TRIGGER takes a SHARE ROW EXCLUSIVE lock; reads go on): about a second per million
 * users or events, see docs/operations.md.
 */
export class KeptListCounts1764230000000 implements MigrationInterface {
  name = 'KeptListCounts1764230000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE realm_user_counts (
        realm_id text NOT NULL,
        slot smallint NOT NULL,
        users bigint NOT NULL,
        PRIMARY KEY (realm_id, slot)
      );
      CREATE TABLE audit_event_counts (
        realm_id text NOT NULL,
        type text NOT NULL,
        slot smallint NOT NULL,
        events bigint NOT NULL,
        PRIMARY KEY (realm_id, type, slot)
      );

      CREATE FUNCTION count_users() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO realm_user_counts AS c (realm_id, slot, users)
            SELECT realm_id, pg_backend_pid() % 16, count(*) FROM counted_rows GROUP BY realm_id ORDER BY realm_id
            ON CONFLICT (realm_id, slot) DO UPDATE SET users = c.users + excluded.users;
        ELSIF TG_OP = 'DELETE' THEN
          INSERT INTO realm_user_counts AS c (realm_id, slot, users)
            SELECT realm_id, pg_backend_pid() % 16, -count(*) FROM counted_rows GROUP BY realm_id ORDER BY realm_id
            ON CONFLICT (realm_id, slot) DO UPDATE SET users = c.users + excluded.users;
        ELSE
          DELETE FROM realm_user_counts;
        END IF;
        RETURN NULL;
      END $$;

      CREATE FUNCTION count_audit_events() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO audit_event_counts AS c (realm_id, type, slot, events)
            SELECT realm_id, type, pg_backend_pid() % 16, count(*) FROM counted_rows GROUP BY realm_id, type ORDER BY realm_id, type
            ON CONFLICT (realm_id, type, slot) DO UPDATE SET events = c.events + excluded.events;
        ELSIF TG_OP = 'DELETE' THEN
          INSERT INTO audit_event_counts AS c (realm_id, type, slot, events)
            SELECT realm_id, type, pg_backend_pid() % 16, -count(*) FROM counted_rows GROUP BY realm_id, type ORDER BY realm_id, type
            ON CONFLICT (realm_id, type, slot) DO UPDATE SET events = c.events + excluded.events;
        ELSE
          DELETE FROM audit_event_counts;
        END IF;
        RETURN NULL;
      END $$;

      CREATE TRIGGER users_counted_insert AFTER INSERT ON users
        REFERENCING NEW TABLE AS counted_rows FOR EACH STATEMENT EXECUTE FUNCTION count_users();
      CREATE TRIGGER users_counted_delete AFTER DELETE ON users
        REFERENCING OLD TABLE AS counted_rows FOR EACH STATEMENT EXECUTE FUNCTION count_users();
      CREATE TRIGGER users_counted_truncate AFTER TRUNCATE ON users FOR EACH STATEMENT EXECUTE FUNCTION count_users();
      CREATE TRIGGER audit_events_counted_insert AFTER INSERT ON audit_events
        REFERENCING NEW TABLE AS counted_rows FOR EACH STATEMENT EXECUTE FUNCTION count_audit_events();
      CREATE TRIGGER audit_events_counted_delete AFTER DELETE ON audit_events
        REFERENCING OLD TABLE AS counted_rows FOR EACH STATEMENT EXECUTE FUNCTION count_audit_events();
      CREATE TRIGGER audit_events_counted_truncate AFTER TRUNCATE ON audit_events FOR EACH STATEMENT EXECUTE FUNCTION count_audit_events();

      INSERT INTO realm_user_counts (realm_id, slot, users) SELECT realm_id, 0, count(*) FROM users GROUP BY realm_id;
      INSERT INTO audit_event_counts (realm_id, type, slot, events) SELECT realm_id, type, 0, count(*) FROM audit_events GROUP BY realm_id, type;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER audit_events_counted_truncate ON audit_events;
      DROP TRIGGER audit_events_counted_delete ON audit_events;
      DROP TRIGGER audit_events_counted_insert ON audit_events;
      DROP TRIGGER users_counted_truncate ON users;
      DROP TRIGGER users_counted_delete ON users;
      DROP TRIGGER users_counted_insert ON users;
      DROP FUNCTION count_audit_events();
      DROP FUNCTION count_users();
      DROP TABLE audit_event_counts;
      DROP TABLE realm_user_counts;
    `);
  }
}
