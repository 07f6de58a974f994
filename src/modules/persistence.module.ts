import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { FederationTokenRepository } from '../application/ports/federation-token.repository';
import { IdentityProviderRepository } from '../application/ports/identity-provider.repository';
import { LinkedIdentityRepository } from '../application/ports/linked-identity.repository';
import { MfaCredentialRepository } from '../application/ports/mfa-credential.repository';
import { OneTimeTokenRepository } from '../application/ports/one-time-token.repository';
import { RealmRepository } from '../application/ports/realm.repository';
import { RefreshTokenRepository } from '../application/ports/refresh-token.repository';
import { RoleRepository } from '../application/ports/role.repository';
import { SessionEndListener } from '../application/ports/session-end-listener';
import { SessionRepository } from '../application/ports/session.repository';
import { Transaction } from '../application/ports/transaction';
import { UserRepository } from '../application/ports/user.repository';
import { openDatabase } from '../adapters/persistence/open-database';
import { TypeOrmAuditLog } from '../adapters/persistence/typeorm-audit-log';
import { TypeOrmFederationTokenRepository } from '../adapters/persistence/typeorm-federation-token.repository';
import { TypeOrmIdentityProviderRepository } from '../adapters/persistence/typeorm-identity-provider.repository';
import { TypeOrmLinkedIdentityRepository } from '../adapters/persistence/typeorm-linked-identity.repository';
import { TypeOrmMfaCredentialRepository } from '../adapters/persistence/typeorm-mfa-credential.repository';
import { TypeOrmOneTimeTokenRepository } from '../adapters/persistence/typeorm-one-time-token.repository';
import { TypeOrmOpSessionEnds } from '../adapters/persistence/typeorm-op-session-ends';
import { TypeOrmReadinessProbe } from '../adapters/persistence/typeorm-readiness-probe';
import { TypeOrmRealmRepository } from '../adapters/persistence/typeorm-realm.repository';
import { TypeOrmRefreshTokenRepository } from '../adapters/persistence/typeorm-refresh-token.repository';
import { TypeOrmRoleRepository } from '../adapters/persistence/typeorm-role.repository';
import { TypeOrmServerSecrets } from '../adapters/persistence/typeorm-server-secrets';
import { TypeOrmSessionRepository } from '../adapters/persistence/typeorm-session.repository';
import { TypeOrmSigningKeyStore } from '../adapters/persistence/typeorm-signing-key-store';
import { TypeOrmTransaction } from '../adapters/persistence/typeorm-transaction';
import { TypeOrmUserRepository } from '../adapters/persistence/typeorm-user.repository';
import { AppConfig } from '../config/app-config';

import { OrganizationInvitationRepository } from '../application/ports/organization-invitation.repository';
import { OrganizationMemberRepository } from '../application/ports/organization-member.repository';
import { OrganizationRepository } from '../application/ports/organization.repository';
import { TypeOrmOrganizationInvitationRepository } from '../adapters/persistence/typeorm-organization-invitation.repository';
import { TypeOrmOrganizationMemberRepository } from '../adapters/persistence/typeorm-organization-member.repository';
import { TypeOrmOrganizationRepository } from '../adapters/persistence/typeorm-organization.repository';
const repositories = [
  { provide: RealmRepository, useClass: TypeOrmRealmRepository },
  { provide: UserRepository, useClass: TypeOrmUserRepository },
  { provide: SessionRepository, useClass: TypeOrmSessionRepository },
  { provide: RefreshTokenRepository, useClass: TypeOrmRefreshTokenRepository },
  { provide: OneTimeTokenRepository, useClass: TypeOrmOneTimeTokenRepository },
  { provide: MfaCredentialRepository, useClass: TypeOrmMfaCredentialRepository },
  { provide: LinkedIdentityRepository, useClass: TypeOrmLinkedIdentityRepository },
  { provide: RoleRepository, useClass: TypeOrmRoleRepository },
  { provide: IdentityProviderRepository, useClass: TypeOrmIdentityProviderRepository },
  { provide: FederationTokenRepository, useClass: TypeOrmFederationTokenRepository },
  { provide: OrganizationRepository, useClass: TypeOrmOrganizationRepository },
  { provide: OrganizationMemberRepository, useClass: TypeOrmOrganizationMemberRepository },
  { provide: OrganizationInvitationRepository, useClass: TypeOrmOrganizationInvitationRepository },
];

/**
 * The database: the data source (migrated before anything else starts), the transaction that
 * travels in AsyncLocalStorage, and every repository. Bound once here, used by every feature.
 */
@Global()
@Module({
  providers: [
    { provide: DataSource, inject: [AppConfig], useFactory: openDatabase },
    TypeOrmTransaction,
    { provide: Transaction, useExisting: TypeOrmTransaction },
    // What ends with a session besides it: the OpenID provider's grants and back-channel logouts.
    { provide: SessionEndListener, useClass: TypeOrmOpSessionEnds },
    ...repositories,
    TypeOrmAuditLog,
    TypeOrmServerSecrets,
    TypeOrmSigningKeyStore,
    TypeOrmReadinessProbe,
  ],
  exports: [
    DataSource,
    TypeOrmTransaction,
    Transaction,
    ...repositories.map((binding) => binding.provide),
    TypeOrmAuditLog,
    TypeOrmServerSecrets,
    TypeOrmSigningKeyStore,
    TypeOrmReadinessProbe,
  ],
})
export class PersistenceModule implements OnApplicationShutdown {
  private readonly logger = new Logger('Persistence');

  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) {
      await this.dataSource.destroy().catch((error: unknown) => this.logger.warn(`closing the database: ${String(error)}`));
    }
  }
}
