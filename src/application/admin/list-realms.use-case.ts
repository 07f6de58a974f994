import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { RealmRepository } from '../ports/realm.repository';

@Injectable()
export class ListRealmsUseCase {
  constructor(private readonly realms: RealmRepository) {}

  /** Every realm, oldest first. */
  execute(): Promise<Realm[]> {
    return this.realms.list();
  }
}
