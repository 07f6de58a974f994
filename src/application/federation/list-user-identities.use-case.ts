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

  /**
   * The same for users read with the flag that says whether one is linked: only those that have
   * one (or whose read did not tell) are looked up — usually none, and then nothing is read.
   */
  forUsers(realmId: string, users: readonly { id: string; linkedIdentities?: boolean | null }[]): Promise<Map<string, LinkedIdentity[]>> {
    return this.execute({ realmId, userIds: users.filter((user) => user.linkedIdentities !== false).map((user) => user.id) });
  }
}
