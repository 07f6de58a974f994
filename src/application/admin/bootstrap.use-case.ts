import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { MASTER_REALM, Realm } from '../../domain/realm/realm';
import { REALM_ADMIN, SUPER_ADMIN } from '../../domain/role/role-names';
import { Email } from '../../domain/user/email';
import { assertAcceptablePassword } from '../../domain/user/password-policy';
import { User } from '../../domain/user/user';
import { AccessTokens } from '../ports/access-tokens';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { PasswordBlocklist } from '../ports/password-blocklist';
import { PasswordHasher } from '../ports/password-hasher';
import { RealmRepository } from '../ports/realm.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { realmDefaultsFrom } from '../realm/realm-defaults';

export { MASTER_REALM, REALM_ADMIN, SUPER_ADMIN };

/** First start: realms `master` and `default`, a signing key, the bootstrap super-admin. */
@Injectable()
export class BootstrapUseCase {
  constructor(
    private readonly realms: RealmRepository,
    private readonly users: UserRepository,
    private readonly accessTokens: AccessTokens,
    private readonly hasher: PasswordHasher,
    private readonly blocklist: PasswordBlocklist,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /** @returns what became of the bootstrap super-admin (`exists`: its address is taken, nobody was promoted) */
  async execute(): Promise<{ bootstrapAdmin: 'created' | 'exists' | 'not-needed' | 'not-configured' }> {
    const now = this.clock.now();
    const defaults = realmDefaultsFrom(this.config);
    await this.realms.ensure(Realm.create({ id: MASTER_REALM, name: 'Master', now }, defaults));
    await this.realms.ensure(Realm.create({ id: this.config.defaultRealm, name: 'Default', now }, defaults));
    await this.accessTokens.ensureKey(now);
    if (this.config.bootstrapAdminEmail && this.config.bootstrapAdminPassword) {
      return { bootstrapAdmin: await this.ensureSuperAdmin(this.config.bootstrapAdminEmail, this.config.bootstrapAdminPassword, now) };
    }
    return { bootstrapAdmin: 'not-configured' };
  }

  /** @returns 'exists' when the address belongs to an account already, which is left as it is */
  private async ensureSuperAdmin(rawEmail: string, password: string, now: Date): Promise<'created' | 'exists' | 'not-needed'> {
    if (await this.users.existsWithRole(MASTER_REALM, SUPER_ADMIN)) return 'not-needed';
    const email = Email.parse(rawEmail, 'BOOTSTRAP_ADMIN_EMAIL');
    assertAcceptablePassword(password, (c) => this.blocklist.isCommon(c), { email: email.value }, 'BOOTSTRAP_ADMIN_PASSWORD');
    const passwordHash = await this.hasher.hash(password);
    let skipped = false;
    await this.tx.run(async () => {
      // An existing account is never promoted: whoever made it chose its password and may hold
      // its sessions. The operator picks another address, or promotes it knowingly with the CLI.
      if (await this.users.findByEmail(MASTER_REALM, email.value)) {
        skipped = true;
        return;
      }
      const admin = User.register({
        id: crypto.randomUUID(),
        realmId: MASTER_REALM,
        email: email.value,
        name: 'Administrator',
        passwordHash,
        emailVerified: true,
        roles: [SUPER_ADMIN],
        now,
      });
      await this.users.insert(admin);
      await this.audit.record({
        type: 'user.created',
        realmId: MASTER_REALM,
        userId: admin.id,
        at: now,
        details: { roles: admin.roles, by: 'bootstrap' },
      });
    });
    return skipped ? 'exists' : 'created';
  }
}
