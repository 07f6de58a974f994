import { Realm } from '../../domain/realm/realm';

export abstract class RealmRepository {
  abstract findById(id: string): Promise<Realm | null>;
  /**
   * The realm with its row locked until the surrounding transaction ends: call it inside
   * `Transaction.run` to read, change and `save` a realm without losing a concurrent change.
   */
  abstract findByIdForUpdate(id: string): Promise<Realm | null>;
  abstract list(): Promise<Realm[]>;
  /** @throws DomainError VALIDATION_FAILED when a realm with this id exists */
  abstract insert(realm: Realm): Promise<void>;
  /** Creates the realm unless one with its id exists. */
  abstract ensure(realm: Realm): Promise<void>;
  /** Writes the realm's name, `enabled`, settings and `updatedAt`. */
  abstract save(realm: Realm): Promise<void>;
}
