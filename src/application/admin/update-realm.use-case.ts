import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { parseSettingsPatch } from '../../domain/realm/realm-settings';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { RealmRepository } from '../ports/realm.repository';
import { Transaction } from '../ports/transaction';
import { RealmDirectory } from '../realm/realm-directory';

export interface UpdateRealmInput {
  realmId: string;
  name?: string;
  enabled?: boolean;
  /** Untrusted: checked field by field here, whoever sends it (REST or the command line). */
  settings?: unknown;
  /** The acting admin; null from the command line. */
  actorId: string | null;
  ip: string | null;
}

@Injectable()
export class UpdateRealmUseCase {
  constructor(
    private readonly realms: RealmRepository,
    private readonly directory: RealmDirectory,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Changes a realm's name, `enabled` and settings (merged field by field, null back to the
   * deployment default) and audits `realm.updated` with the changed fields. This instance uses the
   * change at once; the others within the directory's cache time.
   * @throws DomainError REALM_NOT_FOUND | VALIDATION_FAILED (with a detail per bad field)
   */
  async execute(input: UpdateRealmInput): Promise<Realm> {
    const settings = input.settings === undefined ? undefined : parseSettingsPatch(input.settings);
    const now = this.clock.now();
    const realm = await this.tx.run(async () => {
      const current = await this.realms.findByIdForUpdate(input.realmId);
      if (!current) throw new DomainError('REALM_NOT_FOUND', `Realm "${input.realmId}" does not exist`);
      const changes = current.update({ name: input.name, enabled: input.enabled, settings }, now);
      if (changes.changed.length === 0) return current;
      await this.realms.save(current);
      await this.audit.record({
        type: 'realm.updated',
        realmId: current.id,
        actorId: input.actorId,
        ip: input.ip,
        at: now,
        details: { ...changes, by: input.actorId ? 'admin' : 'cli' },
      });
      this.tx.afterCommit(() => this.directory.forget(current.id));
      return current;
    });
    return realm;
  }
}
