import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { splitName, User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SignInHooks } from '../ports/sign-in-hooks';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AccountEmails } from '../account/account-emails';
import { NewPassword } from '../account/new-password';

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
    private readonly newPassword: NewPassword,
    private readonly accountEmails: AccountEmails,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly hooks: SignInHooks,
  ) {}

  /**
   * Creates the user and queues the verification email in one transaction, while the realm's
   * registration is open; the password follows the realm's policy. The realm's
   * `before-registration` hook decides first: refused, nothing is written and no email sent.
   * @throws DomainError REGISTRATION_DISABLED | VALIDATION_FAILED | EMAIL_ALREADY_REGISTERED | HOOK_DENIED | HOOK_FAILED
   */
  async execute(input: RegisterInput): Promise<User> {
    const { policy } = input.realm;
    policy.assertRegistrationOpen();
    const email = Email.parse(input.email);
    const { firstName, lastName } = splitName(input.name);
    // Hash before looking for a duplicate, so a registered address answers no faster than a new one.
    const passwordHash = await this.newPassword.hash({ realm: input.realm, password: input.password, email: email.value });
    const admitted = this.hooks.beforeRegistration({
      realm: input.realm,
      email: email.value,
      firstName,
      lastName,
      method: 'password',
      ip: input.ip,
    });
    if (admitted) await admitted;
    const now = this.clock.now();
    const user = User.register({
      id: crypto.randomUUID(),
      realmId: input.realm.id,
      email: email.value,
      name: input.name,
      passwordHash,
      now,
    });
    await this.tx.run(async () => {
      await this.users.insert(user);
      await this.accountEmails.sendVerification(input.realm, user, now);
      await this.audit.record({ type: 'user.registered', realmId: user.realmId, userId: user.id, ip: input.ip, at: now });
    });
    return user;
  }
}
