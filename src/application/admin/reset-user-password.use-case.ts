import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { AccountEmails } from '../account/account-emails';
import { NewPassword } from '../account/new-password';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AdminActor, findTargetUser, lockTargetUser } from './admin-actor';

export interface ResetUserPasswordInput {
  actor: AdminActor;
  realm: Realm;
  userId: string;
  password?: string;
}

@Injectable()
export class ResetUserPasswordUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly newPassword: NewPassword,
    private readonly accountEmails: AccountEmails,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * With a password: sets it (the realm's password policy) and voids pending reset links. Without: queues a
   * password-reset email. Either way every session of the user is revoked, and so is every sign-in
   * waiting for its second factor.
   * @throws DomainError USER_NOT_FOUND | VALIDATION_FAILED
   */
  async execute(input: ResetUserPasswordInput): Promise<{ method: 'set' | 'email' }> {
    const { actor, realm } = input;
    const found = await findTargetUser(this.users, realm.id, input.userId);
    const passwordHash =
      input.password === undefined ? null : await this.newPassword.hash({ realm, password: input.password, email: found.email });
    const method = passwordHash ? 'set' : 'email';
    const now = this.clock.now();
    const revokeReason = 'admin_password_reset';
    const event = {
      type: 'user.password_reset',
      actorId: actor.id,
      ip: actor.ip,
      details: (revokedSessions: number) => ({ method, revokedSessions }),
    } as const;
    await this.tx.run(async () => {
      const user = await lockTargetUser(this.users, actor, realm.id, input.userId);
      if (passwordHash) {
        await this.newPassword.set({ realm, user, passwordHash, now, revokeReason, voidMfaChallenges: true, event });
        return;
      }
      await this.accountEmails.sendPasswordReset(realm, user, now);
      const revoked = await this.sessions.revokeAllForUser(realm.id, user.id, now, revokeReason);
      // A sign-in waiting for its second factor is a session about to open: it ends with the others.
      await this.oneTimeTokens.voidUnused(user.id, 'mfa', now);
      const { details, ...entry } = event;
      await this.audit.record({ ...entry, realmId: realm.id, userId: user.id, at: now, details: details(revoked) });
    });
    return { method };
  }
}
