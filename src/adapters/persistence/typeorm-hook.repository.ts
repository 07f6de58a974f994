import { Injectable } from '@nestjs/common';
import { ActiveHooks, HookRepository } from '../../application/ports/hook.repository';
import { SecretCipher } from '../../application/ports/secret-cipher';
import { Hook, HOOK_NAMES, HookFailurePolicy, HookName } from '../../domain/hook/hook';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';

/** How long an instance trusts its copy of a realm's enabled hooks (changes made elsewhere reach it within this). */
export const ACTIVE_HOOKS_TTL_MS = 4000;

interface HookRow {
  realmId: string;
  name: HookName;
  url: string;
  enabled: boolean;
  timeoutMs: number;
  failure: HookFailurePolicy;
  secret: string;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = `realm_id AS "realmId", name, url, enabled, timeout_ms AS "timeoutMs", failure, secret,
  created_at AS "createdAt", updated_at AS "updatedAt"`;

const NONE: ActiveHooks = new Map();

/** The secret's encryption is bound to the realm and the hook's name: a value copied to another row does not decrypt. */
const secretContext = (realmId: string, name: string) => `hook:${realmId}:${name}`;

@Injectable()
export class TypeOrmHookRepository implements HookRepository {
  /** Realm → its enabled hooks, read at most every ACTIVE_HOOKS_TTL_MS. */
  private readonly cache = new Map<string, { readAt: number; hooks: ActiveHooks | null; reading: Promise<ActiveHooks> }>();

  constructor(
    private readonly tx: TypeOrmTransaction,
    private readonly cipher: SecretCipher,
  ) {}

  async list(realmId: string): Promise<Hook[]> {
    const rows: HookRow[] = await this.tx.manager.query(`SELECT ${COLUMNS} FROM hooks WHERE realm_id = $1`, [realmId]);
    const hooks = await Promise.all(rows.map((row) => this.toHook(row)));
    return hooks.sort((a, b) => HOOK_NAMES.indexOf(a.name) - HOOK_NAMES.indexOf(b.name));
  }

  async findForUpdate(realmId: string, name: HookName): Promise<Hook | null> {
    const rows: HookRow[] = await this.tx.manager.query(`SELECT ${COLUMNS} FROM hooks WHERE realm_id = $1 AND name = $2 FOR UPDATE`, [
      realmId,
      name,
    ]);
    return rows[0] ? this.toHook(rows[0]) : null;
  }

  async save(hook: Hook): Promise<void> {
    const s = hook.snapshot();
    const secret = await this.cipher.encrypt(s.secret, secretContext(s.realmId, s.name));
    await this.tx.manager.query(
      `INSERT INTO hooks (realm_id, name, url, enabled, timeout_ms, failure, secret, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (realm_id, name) DO UPDATE SET url = excluded.url, enabled = excluded.enabled, timeout_ms = excluded.timeout_ms,
         failure = excluded.failure, secret = excluded.secret, updated_at = excluded.updated_at`,
      [s.realmId, s.name, s.url, s.enabled, s.timeoutMs, s.failure, secret, s.createdAt, s.updatedAt],
    );
    this.tx.afterCommit(() => this.forget(s.realmId));
  }

  async delete(realmId: string, name: HookName): Promise<boolean> {
    const rows = unwrapRows(
      await this.tx.manager.query(`DELETE FROM hooks WHERE realm_id = $1 AND name = $2 RETURNING name`, [realmId, name]),
    );
    const deleted = rows.length > 0;
    if (deleted) this.tx.afterCommit(() => this.forget(realmId));
    return deleted;
  }

  active(realmId: string): ActiveHooks | Promise<ActiveHooks> {
    const cached = this.cache.get(realmId);
    if (cached && performance.now() - cached.readAt < ACTIVE_HOOKS_TTL_MS) return cached.hooks ?? cached.reading;
    const entry = { readAt: performance.now(), hooks: null as ActiveHooks | null, reading: Promise.resolve(NONE) };
    entry.reading = this.readActive(realmId).then(
      (hooks) => {
        entry.hooks = hooks;
        return hooks;
      },
      (error: unknown) => {
        if (this.cache.get(realmId) === entry) this.cache.delete(realmId);
        throw error;
      },
    );
    this.cache.set(realmId, entry);
    return entry.reading;
  }

  /** Drops this instance's copy of a realm's hooks (after a change made here). */
  forget(realmId: string): void {
    this.cache.delete(realmId);
  }

  /** Shared data, no part of the caller's unit of work: read beside a batch, never inside it. */
  private async readActive(realmId: string): Promise<ActiveHooks> {
    const rows: HookRow[] = await this.tx.sharedReadManager.query(`SELECT ${COLUMNS} FROM hooks WHERE realm_id = $1 AND enabled`, [
      realmId,
    ]);
    if (rows.length === 0) return NONE;
    const hooks = await Promise.all(rows.map((row) => this.toHook(row)));
    return new Map(hooks.map((hook) => [hook.name, hook]));
  }

  private async toHook(row: HookRow): Promise<Hook> {
    return Hook.restore({
      realmId: row.realmId,
      name: row.name,
      url: row.url,
      enabled: row.enabled,
      timeoutMs: Number(row.timeoutMs),
      failure: row.failure,
      secret: await this.cipher.decrypt(row.secret, secretContext(row.realmId, row.name)),
      createdAt: new Date(row.createdAt),
      updatedAt: new Date(row.updatedAt),
    });
  }
}
