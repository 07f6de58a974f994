import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A batch of writes is one statement of data-modifying CTEs. Some of its writes are conditions
 * (a login's user update applies only while the account may still sign in): when such a write
 * matches no row, the whole statement must fail and nothing of it be stored. Plain SQL cannot
 * raise an error, so the batch's final SELECT calls this function on each such write.
 */
export class RequiredBatchWrites1764220000000 implements MigrationInterface {
  name = 'RequiredBatchWrites1764220000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION require_written(matched boolean, part integer) RETURNS integer LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT matched THEN
          RAISE EXCEPTION 'write % of the batch matched no row', part USING ERRCODE = 'IDB01';
        END IF;
        RETURN 1;
      END $$
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION require_written(boolean, integer)`);
  }
}
