import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { User } from '../../domain/user/user';
import { AccountEmails } from '../account/account-emails';
import { NewPassword } from '../account/new-password';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { RoleRepository } from '../ports/role.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { assertAssignable } from '../roles/realm-roles';
import { AdminActor, assertMayGrant } from './admin-actor';

export interface CreateUserInput {
  actor: AdminActor;
  realm: Realm;
  email: string;
  name: string;
  password?: string;
  emailVerified?: boolean;
  roles?: string[];
}

@Injectable()
export class CreateUserUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly roles: RoleRepository,
    private readonly newPassword: NewPassword,
    private readonly accountEmails: AccountEmails,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates a user in the realm. With a password it is set (the realm's password policy
   * applies); without one, an invitation email with a link to choose it is queued in the same
   * transaction. Its roles must be built in or defined by the realm.
   * @throws DomainError VALIDATION_FAILED | EMAIL_ALREADY_REGISTERED | FORBIDDEN
   */
  async execute(input: CreateUserInput): Promise<User> {
    const { actor, realm } = input;
    const email = Email.parse(input.email);
    const roles = input.roles ?? [];
    assertMayGrant(actor, realm.id, [], roles);
    const passwordHash =
      input.password === undefined ? null : await this.newPassword.hash({ realm, password: input.password, email: email.value });
    const now = this.clock.now();
    const user = User.register({
      id: crypto.randomUUID(),
      realmId: realm.id,
      email: email.value,
      name: input.name,
      passwordHash,
      emailVerified: input.emailVerified ?? false,
      now,
    });
    user.setRoles(roles, now);
    await this.tx.run(async () => {
      await assertAssignable(this.roles, realm.id, user.roles);
      await this.users.insert(user);
      if (!passwordHash) await this.accountEmails.sendInvitation(realm, user, now);
      await this.audit.record({
        type: 'user.created',
        realmId: realm.id,
        userId: user.id,
        actorId: actor.id,
        ip: actor.ip,
        at: now,
        details: { roles: user.roles, emailVerified: user.emailVerified, invited: !passwordHash },
      });
    });
    return user;
  }
}
