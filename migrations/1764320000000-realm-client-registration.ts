import { MigrationInterface, QueryRunner } from 'typeorm';

/** The realm setting `clientRegistration`: dynamic client registration at its OpenID provider (null: the default, closed). */
export class RealmClientRegistration1764320000000 implements MigrationInterface {
  name = 'RealmClientRegistration1764320000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE realms ADD COLUMN client_registration text NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE realms DROP COLUMN client_registration`);
  }
}
