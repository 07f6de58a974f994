import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { AccountEmails } from '../auth/account-emails';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { PasswordBlocklist } from '../ports/password-blocklist';
import { PasswordHasher } from '../ports/password-hasher';
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
    private readonly hasher: PasswordHasher,
    private readonly blocklist: PasswordBlocklist,
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
    let passwordHash: string | null = null;
    if (input.password !== undefined) {
      realm.policy.assertAcceptablePassword(input.password, (c) => this.blocklist.isCommon(c), {
        email: found.email,
        contextWords: [realm.id, realm.name],
      });
      passwordHash = await this.hasher.hash(input.password);
    }
    const method = passwordHash ? 'set' : 'email';
    const now = this.clock.now();
    await this.tx.run(async () => {
      const user = await lockTargetUser(this.users, actor, realm.id, input.userId);
      if (passwordHash) {
        user.changePasswordHash(passwordHash, now);
        await this.users.save(user);
        await this.oneTimeTokens.voidUnused(user.id, 'password_reset', now);
        await this.accountEmails.sendPasswordChanged(realm, user);
      } else {
        await this.accountEmails.sendPasswordReset(realm, user, now);
      }
      const revoked = await this.sessions.revokeAllForUser(realm.id, user.id, now, 'admin_password_reset');
      // A sign-in waiting for its second factor is a session about to open: it ends with the others.
      await this.oneTimeTokens.voidUnused(user.id, 'mfa', now);
      await this.audit.record({
        type: 'user.password_reset',
        realmId: realm.id,
        userId: user.id,
        actorId: actor.id,
        ip: actor.ip,
        at: now,
        details: { method, revokedSessions: revoked },
      });
    });
    return { method };
  }
}
