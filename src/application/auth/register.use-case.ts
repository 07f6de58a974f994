import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { assertAcceptablePassword } from '../../domain/user/password-policy';
import { splitName, User } from '../../domain/user/user';
import { EmailTemplates } from '../mail/email-templates';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { Mailer } from '../ports/mailer';
import { OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { PasswordBlocklist } from '../ports/password-blocklist';
import { PasswordHasher } from '../ports/password-hasher';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';

export const EMAIL_VERIFICATION_TTL_SECONDS = 24 * 3600;

export interface RegisterInput {
  realm: Realm;
  email: string;
  password: string;
  name: string;
  ip: string;
}

@Injectable()
export class RegisterUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly hasher: PasswordHasher,
    private readonly blocklist: PasswordBlocklist,
    private readonly secureTokens: SecureTokens,
    private readonly mailer: Mailer,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Creates the user and queues the verification email in one transaction (contract §3.1).
   * @throws DomainError VALIDATION_FAILED | EMAIL_ALREADY_REGISTERED
   */
  async execute(input: RegisterInput): Promise<User> {
    const email = Email.parse(input.email);
    splitName(input.name);
    assertAcceptablePassword(input.password, (c) => this.blocklist.isCommon(c), {
      email: email.value,
      contextWords: [input.realm.id, input.realm.name],
    });
    // Hash before looking for a duplicate, so a registered address answers no faster than a new one.
    const passwordHash = await this.hasher.hash(input.password);
    const now = this.clock.now();
    const user = User.register({ id: crypto.randomUUID(), realmId: input.realm.id, email: email.value, name: input.name, passwordHash, now });
    const token = this.secureTokens.generate();
    await this.tx.run(async () => {
      await this.users.insert(user);
      await this.oneTimeTokens.insert({
        tokenHash: this.secureTokens.hash(token),
        realmId: user.realmId,
        userId: user.id,
        kind: 'email_verification',
        email: user.email,
        payload: {},
        attempts: 0,
        createdAt: now,
        expiresAt: new Date(now.getTime() + EMAIL_VERIFICATION_TTL_SECONDS * 1000),
        usedAt: null,
      });
      await this.mailer.enqueue(
        EmailTemplates.verification({ realmId: user.realmId, realmName: input.realm.name, to: user.email, publicUrl: this.config.publicUrl, token }),
      );
      await this.audit.record({ type: 'user.registered', realmId: user.realmId, userId: user.id, ip: input.ip, at: now });
    });
    return user;
  }
}
