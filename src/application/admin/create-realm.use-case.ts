import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { RealmRepository } from '../ports/realm.repository';
import { Transaction } from '../ports/transaction';
import { RealmDefaults } from '../realm/realm-defaults';

export interface CreateRealmInput {
  id: string;
  name: string;
  /** The acting super-admin; null from the command line. */
  actorId: string | null;
  ip: string | null;
}

@Injectable()
export class CreateRealmUseCase {
  constructor(
    private readonly realms: RealmRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly defaults: RealmDefaults,
  ) {}

  /**
   * Creates a realm; the `realm.created` event is recorded in the new realm.
   * @throws DomainError VALIDATION_FAILED for a malformed or taken id, or an empty name
   */
  async execute(input: CreateRealmInput): Promise<Realm> {
    const now = this.clock.now();
    const realm = Realm.create({ id: input.id, name: input.name, now }, this.defaults.settings);
    await this.tx.run(async () => {
      await this.realms.insert(realm);
      await this.audit.record({
        type: 'realm.created',
        realmId: realm.id,
        actorId: input.actorId,
        ip: input.ip,
        at: now,
        details: { name: realm.name, by: input.actorId ? 'admin' : 'cli' },
      });
    });
    return realm;
  }
}
