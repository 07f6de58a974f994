import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Email } from '../../domain/user/email';
import { assertAcceptablePassword } from '../../domain/user/password-policy';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { PasswordBlocklist } from '../ports/password-blocklist';
import { PasswordHasher } from '../ports/password-hasher';
import { RealmRepository } from '../ports/realm.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { MASTER_REALM, REALM_ADMIN, SUPER_ADMIN } from './bootstrap.use-case';

export interface CreateAdminInput {
  realmId: string;
  email: string;
  /** super-admin (realm master only) instead of realm-admin. */
  superAdmin: boolean;
  /** Used only when the account is created. */
  password: string;
  /**
   * Grant the role to an account that already has the address, keeping its password, factors and
   * sessions. Without it such an account is refused: whoever created it chose its credentials.
   */
  grantExisting?: boolean;
}

export interface CreateAdminResult {
  user: User;
  /** false: the account existed and was granted the role; its password is unchanged. */
  created: boolean;
  role: string;
}

/** The command line's `create-admin`: an operator's way in, outside the HTTP API. */
@Injectable()
export class CreateAdminUseCase {
  constructor(
    private readonly realms: RealmRepository,
    private readonly users: UserRepository,
    private readonly hasher: PasswordHasher,
    private readonly blocklist: PasswordBlocklist,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates an administrator of the realm (verified email, the role), or, when asked to, grants the
   * role to the existing account with that email.
   * @throws DomainError REALM_NOT_FOUND | VALIDATION_FAILED | EMAIL_ALREADY_REGISTERED when the
   *   address has an account and `grantExisting` is not set
   */
  async execute(input: CreateAdminInput): Promise<CreateAdminResult> {
    const realm = await this.realms.findById(input.realmId);
    if (!realm) throw new DomainError('REALM_NOT_FOUND', `Realm "${input.realmId}" does not exist`);
    if (input.superAdmin && realm.id !== MASTER_REALM) {
      throw DomainError.validation('realm', `a super-admin belongs to the ${MASTER_REALM} realm`);
    }
    const role = input.superAdmin ? SUPER_ADMIN : REALM_ADMIN;
    const email = Email.parse(input.email);
    const now = this.clock.now();
    const existing = await this.users.findByEmail(realm.id, email.value);
    if (existing && !input.grantExisting) {
      throw new DomainError(
        'EMAIL_ALREADY_REGISTERED',
        `${email.value} already has an account in realm "${realm.id}"; it keeps the password and sessions its creator chose. Pass --existing to grant the role to it anyway`,
      );
    }
    if (existing) {
      const user = await this.tx.run(async () => {
        const locked = await this.users.findByIdForUpdate(realm.id, existing.id);
        if (!locked) throw new DomainError('USER_NOT_FOUND', 'User not found');
        const before = locked.roles;
        locked.setRoles([...before, role], now);
        await this.users.save(locked);
        await this.audit.record({
          type: 'user.roles_changed',
          realmId: realm.id,
          userId: locked.id,
          at: now,
          details: { before, after: locked.roles, by: 'cli' },
        });
        return locked;
      });
      return { user, created: false, role };
    }
    assertAcceptablePassword(input.password, (c) => this.blocklist.isCommon(c), {
      email: email.value,
      contextWords: [realm.id, realm.name],
    });
    const passwordHash = await this.hasher.hash(input.password);
    const user = User.register({
      id: crypto.randomUUID(),
      realmId: realm.id,
      email: email.value,
      name: 'Administrator',
      passwordHash,
      emailVerified: true,
      now,
    });
    user.setRoles([role], now);
    await this.tx.run(async () => {
      await this.users.insert(user);
      await this.audit.record({
        type: 'user.created',
        realmId: realm.id,
        userId: user.id,
        at: now,
        details: { roles: user.roles, by: 'cli' },
      });
    });
    return { user, created: true, role };
  }
}
