import { MigrationInterface, QueryRunner } from 'typeorm';

/** The realm setting `allowedReturnUrls`: where a sign-in elsewhere may send a browser back (null: the default, none). */
export class RealmReturnUrls1764300000000 implements MigrationInterface {
  name = 'RealmReturnUrls1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE realms ADD COLUMN allowed_return_urls text[] NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE realms DROP COLUMN allowed_return_urls`);
  }
}
