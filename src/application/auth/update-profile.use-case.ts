import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { ProfileChanges, User } from '../../domain/user/user';
import { SessionLifetime } from '../../domain/session/session';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';

export interface UpdateProfileInput {
  realmId: string;
  userId: string;
  sessionId: string;
  /** The realm's session lifetimes: the caller's session must still be live when the change is made. */
  lifetime: SessionLifetime;
  changes: ProfileChanges;
  ip: string;
}

@Injectable()
export class UpdateProfileUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Changes the caller's own name and avatar, on the row locked for the change so two edits at
   * once do not undo each other, and only while the caller's session is live: a takeover of the
   * account (which clears the profile and ends every session under the same lock) is not undone
   * by an edit that was authenticated before it. A change is audited (`user.profile_updated`, naming the fields,
   * not their values); a request that changes nothing writes nothing.
   * @throws DomainError VALIDATION_FAILED | INVALID_TOKEN when the token's user no longer exists
   */
  async execute(input: UpdateProfileInput): Promise<User> {
    const now = this.clock.now();
    return this.tx.run(async () => {
      const user = await this.users.findByIdForUpdate(input.realmId, input.userId);
      const live = user ? await this.sessions.isLive(input.realmId, input.sessionId, now, input.lifetime) : false;
      if (!user || !live) throw new DomainError('INVALID_TOKEN', 'The access token is invalid');
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
