import { Injectable } from '@nestjs/common';
import { TypeOrmTransaction } from './typeorm-transaction';

/**
 * Secrets every instance must share (kept in the database, generated once). The first instance
 * to start writes the value; the others read the winner's.
 */
@Injectable()
export class TypeOrmServerSecrets {
  private readonly cache = new Map<string, Promise<string>>();

  constructor(private readonly tx: TypeOrmTransaction) {}

  get(name: string, generate: () => string): Promise<string> {
    let value = this.cache.get(name);
    if (!value) {
      value = this.load(name, generate);
      value.catch(() => this.cache.delete(name));
      this.cache.set(name, value);
    }
    return value;
  }

  private async load(name: string, generate: () => string): Promise<string> {
    await this.tx.manager.query(
      `INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, now()) ON CONFLICT (name) DO NOTHING`,
      [name, generate()],
    );
    const rows: { value: string }[] = await this.tx.manager.query(`SELECT value FROM server_secrets WHERE name = $1`, [name]);
    return rows[0].value;
  }
}
