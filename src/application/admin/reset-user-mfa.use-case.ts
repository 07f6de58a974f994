import { Injectable } from '@nestjs/common';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AdminActor, lockTargetUser } from './admin-actor';

@Injectable()
export class ResetUserMfaUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly mfaCredentials: MfaCredentialRepository,
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Removes the user's TOTP secret, WebAuthn credentials and recovery codes and revokes every
   * session, in one transaction: the next login asks for the password only.
   * @throws DomainError USER_NOT_FOUND
   */
  async execute(input: { actor: AdminActor; realmId: string; userId: string }): Promise<User> {
    const { actor, realmId } = input;
    const now = this.clock.now();
    return this.tx.run(async () => {
      // The row lock orders this against a concurrent enrolment or deletion of the user.
      const user = await lockTargetUser(this.users, actor, realmId, input.userId);
      const removed = user.mfaMethods;
      await this.mfaCredentials.deleteAllForUser(user.id);
      const revoked = await this.sessions.revokeAllForUser(realmId, user.id, now, 'admin_mfa_reset');
      await this.audit.record({
        type: 'user.mfa_reset',
        realmId,
        userId: user.id,
        actorId: actor.id,
        ip: actor.ip,
        at: now,
        details: { methods: removed, revokedSessions: revoked },
      });
      user.setMfaMethods([]);
      return user;
    });
  }
}
