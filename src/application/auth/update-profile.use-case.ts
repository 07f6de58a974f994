import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { ProfileChanges, User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';

export interface UpdateProfileInput {
  realmId: string;
  userId: string;
  sessionId: string;
  changes: ProfileChanges;
  ip: string;
}

@Injectable()
export class UpdateProfileUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Changes the caller's own name and avatar, on the row locked for the change so two edits at
   * once do not undo each other. A change is audited (`user.profile_updated`, naming the fields,
   * not their values); a request that changes nothing writes nothing.
   * @throws DomainError VALIDATION_FAILED | INVALID_TOKEN when the token's user no longer exists
   */
  async execute(input: UpdateProfileInput): Promise<User> {
    const now = this.clock.now();
    return this.tx.run(async () => {
      const user = await this.users.findByIdForUpdate(input.realmId, input.userId);
      if (!user) throw new DomainError('INVALID_TOKEN', 'The access token is invalid');
      const fields = user.updateProfile(input.changes, now);
      if (fields.length === 0) return user;
      await this.users.save(user);
      await this.audit.record({
        type: 'user.profile_updated',
        realmId: input.realmId,
        userId: user.id,
        sessionId: input.sessionId,
        ip: input.ip,
        at: now,
        details: { fields },
      });
      return user;
    });
  }
}
