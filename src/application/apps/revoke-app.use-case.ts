import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { OpGrants } from '../ports/op-grants';

/** A user takes back what they allowed an app: its grant and every code and token under it (`DELETE /apps/:clientId`). */
@Injectable()
export class RevokeAppUseCase {
  constructor(private readonly grants: OpGrants) {}

  /** @throws DomainError CLIENT_NOT_FOUND when the user allowed no such app */
  async execute(input: { realmId: string; userId: string; clientId: string }): Promise<void> {
    if (!(await this.grants.revokeForUser(input.realmId, input.userId, input.clientId))) {
      throw new DomainError('CLIENT_NOT_FOUND', 'You have not allowed this app');
    }
  }
}
