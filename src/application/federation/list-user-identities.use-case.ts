import { Injectable } from '@nestjs/common';
import { LinkedIdentity } from '../../domain/federation/linked-identity';
import { LinkedIdentityRepository } from '../ports/linked-identity.repository';

@Injectable()
export class ListUserIdentitiesUseCase {
  constructor(private readonly identities: LinkedIdentityRepository) {}

  /** Each user's linked identity-provider accounts (one read for a whole page), oldest link first. */
  execute(input: { realmId: string; userIds: readonly string[] }): Promise<Map<string, LinkedIdentity[]>> {
    return this.identities.listForUsers(input.realmId, input.userIds);
  }
}
