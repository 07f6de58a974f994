import { Injectable } from '@nestjs/common';
import { IdTokenKeyRecord, SigningKeyRecord } from './records/signing-key.record';
import { TypeOrmTransaction } from './typeorm-transaction';

export type StoredSigningKey = Pick<SigningKeyRecord, 'kid' | 'algorithm' | 'privateKey' | 'publicJwk' | 'createdAt' | 'retiredAt'>;

/**
 * Signing keys shared by every instance. The current key is the newest unretired one; the JWKS
 * publishes it and the previous one, which keeps verifying tokens it signed until they expire.
 */
@Injectable()
export class TypeOrmSigningKeyStore {
  /** The table's record class, its name, and the advisory lock its rotations take. */
  protected readonly record: typeof SigningKeyRecord | typeof IdTokenKeyRecord = SigningKeyRecord;
  protected readonly table: string = 'signing_keys';
  protected readonly lock: number = 7263001;

  constructor(private readonly tx: TypeOrmTransaction) {}

  /** The current key first, then the previous one. */
  async published(): Promise<StoredSigningKey[]> {
    // A cache refill, possibly started by a login signing inside `Transaction.batch`.
    const rows = await this.tx.sharedReadManager.getRepository(this.record).find({ order: { createdAt: 'DESC', kid: 'ASC' }, take: 2 });
    return rows.map((r) => ({ ...r, createdAt: new Date(r.createdAt), retiredAt: r.retiredAt ? new Date(r.retiredAt) : null }));
  }

  /** Adds the key when there is none; concurrent starts create exactly one (advisory lock). */
  async ensureOne(generate: () => StoredSigningKey): Promise<void> {
    await this.tx.run(async () => {
      await this.tx.manager.query(`SELECT pg_advisory_xact_lock(${this.lock})`);
      const count = await this.tx.manager.getRepository(this.record).count();
      if (count === 0) await this.tx.manager.getRepository(this.record).insert(generate());
    });
  }

  /** Retires the current key and makes `next` current; returns its kid. */
  async rotate(next: StoredSigningKey): Promise<string> {
    await this.tx.run(async () => {
      await this.tx.manager.query(`SELECT pg_advisory_xact_lock(${this.lock})`);
      await this.tx.manager.query(`UPDATE ${this.table} SET retired_at = $1 WHERE retired_at IS NULL`, [next.createdAt]);
      await this.tx.manager.getRepository(this.record).insert(next);
    });
    return next.kid;
  }

  /**
   * Retires the current key for a new one if it was created before `cutoff`, decided under the
   * rotation lock so that instances racing each other rotate once; returns the new kid or null.
   */
  async rotateIfOlderThan(cutoff: Date, generate: () => StoredSigningKey): Promise<string | null> {
    return this.tx.run(async () => {
      await this.tx.manager.query(`SELECT pg_advisory_xact_lock(${this.lock})`);
      const rows: { created_at: Date }[] = await this.tx.manager.query(
        `SELECT created_at FROM ${this.table} WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1`,
      );
      if (rows[0] && new Date(rows[0].created_at) >= cutoff) return null;
      const next = generate();
      await this.tx.manager.query(`UPDATE ${this.table} SET retired_at = $1 WHERE retired_at IS NULL`, [next.createdAt]);
      await this.tx.manager.getRepository(this.record).insert(next);
      return next.kid;
    });
  }

  /** When the current key was created, or null without keys. */
  async currentCreatedAt(): Promise<Date | null> {
    const [current] = await this.published();
    return current ? current.createdAt : null;
  }
}

/** The RSA keys ID tokens are signed with (RS256): kept, published and rotated like the access tokens' keys. */
@Injectable()
export class TypeOrmIdTokenKeyStore extends TypeOrmSigningKeyStore {
  protected override readonly record = IdTokenKeyRecord;
  protected override readonly table = 'id_token_keys';
  protected override readonly lock = 7263002;
}
