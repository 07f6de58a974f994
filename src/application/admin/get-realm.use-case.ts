import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { RealmRepository } from '../ports/realm.repository';

@Injectable()
export class GetRealmUseCase {
  constructor(private readonly realms: RealmRepository) {}

  /**
   * The realm as stored now (not the few seconds old copy requests use), settings in force included.
   * @throws DomainError REALM_NOT_FOUND
   */
  async execute(realmId: string): Promise<Realm> {
    const realm = await this.realms.findById(realmId);
    if (!realm) throw new DomainError('REALM_NOT_FOUND', `Realm "${realmId}" does not exist`);
    return realm;
  }
}
