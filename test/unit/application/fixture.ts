import { SignInHooks } from '../../../src/application/ports/sign-in-hooks';
import { ScriptedSignInHooks } from '../../fakes/scripted-sign-in-hooks';
import { AccessTokens } from '../../../src/application/ports/access-tokens';
import { AuditLog } from '../../../src/application/ports/audit-log';
import { Clock } from '../../../src/application/ports/clock';
import { DeviceDetector } from '../../../src/application/ports/device-detector';
import { DpopProofVerifier } from '../../../src/application/ports/dpop-proof-verifier';
import { DpopReplayStore } from '../../../src/application/ports/dpop-replay-store';
import { ExpiredDataPurger } from '../../../src/application/ports/expired-data-purger';
import { FederationTokenRepository } from '../../../src/application/ports/federation-token.repository';
import { GeoIp } from '../../../src/application/ports/geo-ip';
import { HostResolver } from '../../../src/application/ports/host-resolver';
import { IdentityProviderClient } from '../../../src/application/ports/identity-provider-client';
import { IdentityProviderRepository } from '../../../src/application/ports/identity-provider.repository';
import { JobLock } from '../../../src/application/ports/job-lock';
import { LinkedIdentityRepository } from '../../../src/application/ports/linked-identity.repository';
import { MailTransport } from '../../../src/application/ports/mail-transport';
import { Mailer } from '../../../src/application/ports/mailer';
import { MfaCredentialRepository } from '../../../src/application/ports/mfa-credential.repository';
import { OneTimeTokenRepository } from '../../../src/application/ports/one-time-token.repository';
import { OrganizationInvitationRepository } from '../../../src/application/ports/organization-invitation.repository';
import { OrganizationMemberRepository } from '../../../src/application/ports/organization-member.repository';
import { OrganizationRepository } from '../../../src/application/ports/organization.repository';
import { PasswordBlocklist } from '../../../src/application/ports/password-blocklist';
import { PasswordHasher } from '../../../src/application/ports/password-hasher';
import { QrCodeRenderer } from '../../../src/application/ports/qr-code-renderer';
import { RealmRepository } from '../../../src/application/ports/realm.repository';
import { RefreshTokenRepository } from '../../../src/application/ports/refresh-token.repository';
import { RoleRepository } from '../../../src/application/ports/role.repository';
import { SecretCipher } from '../../../src/application/ports/secret-cipher';
import { SecureTokens } from '../../../src/application/ports/secure-tokens';
import { SessionRepository } from '../../../src/application/ports/session.repository';
import { TotpVerifier } from '../../../src/application/ports/totp-verifier';
import { Transaction } from '../../../src/application/ports/transaction';
import { UserRepository } from '../../../src/application/ports/user.repository';
import { WebAuthnRelyingParty } from '../../../src/application/ports/webauthn-relying-party';
import { WebhookRepository } from '../../../src/application/ports/webhook.repository';
import { HookRepository } from '../../../src/application/ports/hook.repository';
import { WebhookTargetPolicy } from '../../../src/application/ports/webhook-target-policy';
import { realmDefaultsFrom } from '../../../src/application/realm/realm-defaults';
import { AppConfig } from '../../../src/config/app-config';
import { loadConfig } from '../../../src/config/load-config';
import { Realm } from '../../../src/domain/realm/realm';
import { Session } from '../../../src/domain/session/session';
import { User } from '../../../src/domain/user/user';
import { FakeDpopProofVerifier, InMemoryDpopReplayStore } from '../../fakes/dpop-fakes';
import { InMemoryFederationTokenRepository } from '../../fakes/in-memory-federation-token.repository';
import { InMemoryExpiredDataPurger, InMemoryJobLock, InMemoryRealmRepository } from '../../fakes/in-memory-housekeeping';
import { InMemoryIdentityProviderRepository } from '../../fakes/in-memory-identity-provider.repository';
import { InMemoryLinkedIdentityRepository } from '../../fakes/in-memory-linked-identity.repository';
import { InMemoryMfaCredentialRepository } from '../../fakes/in-memory-mfa-credential.repository';
import { InMemoryOneTimeTokenRepository } from '../../fakes/in-memory-one-time-token.repository';
import {
  InMemoryOrganizationInvitationRepository,
  InMemoryOrganizationMemberRepository,
  InMemoryOrganizationRepository,
  OrganizationStore,
} from '../../fakes/in-memory-organizations';
import { InMemoryRefreshTokenRepository } from '../../fakes/in-memory-refresh-token.repository';
import { InMemoryRoleRepository } from '../../fakes/in-memory-role.repository';
import { InMemorySessionRepository } from '../../fakes/in-memory-session.repository';
import { InMemoryUserRepository } from '../../fakes/in-memory-user.repository';
import { InMemoryWebhookRepository } from '../../fakes/in-memory-webhook.repository';
import { InMemoryHookRepository } from '../../fakes/in-memory-hook.repository';
import { ScriptedIdentityProviderClient } from '../../fakes/scripted-identity-provider-client';
import { ScriptedResolver } from '../../fakes/scripted-resolver';
import { ScriptedWebAuthnRelyingParty } from '../../fakes/scripted-webauthn-relying-party';
import {
  FakeAccessTokens,
  FakePasswordHasher,
  FakeQrCodeRenderer,
  FakeSecureTokens,
  FakeTotpVerifier,
  FixedClock,
  CountingTransaction,
  InMemoryAuditLog,
  InMemoryMailer,
  ListedWebhookTargetPolicy,
  NullGeoIpFake,
  RecordingMailTransport,
  ReversibleSecretCipher,
  SetPasswordBlocklist,
  StaticDeviceDetector,
} from '../../fakes/simple-fakes';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Constructor<T> = abstract new (...args: any[]) => T;

export interface FixtureOptions {
  users?: User[];
  /** Environment variables as the service would read them. */
  env?: Record<string, string>;
  /** Users read with the MFA methods their stored factors give them, as from the database (else as stored). */
  mfaFromFactors?: boolean;
}

/**
 * Every port bound to its fake, and `build(SomeUseCase)` to get any use case (or the helper it
 * needs) wired to them: the constructor's parameter types, as the decorators record them for
 * Nest, are looked up among the fakes, and any other class is built the same way, once.
 * No Nest, no database.
 */
export function useCaseFixture(options: FixtureOptions = {}) {
  const config = loadConfig(options.env ?? {});
  const clock = new FixedClock();
  const realm = Realm.create({ id: 'default', name: 'Default', now: clock.now() }, realmDefaultsFrom(config));
  const master = Realm.create({ id: 'master', name: 'Master', now: clock.now() }, realmDefaultsFrom(config));
  const mfaCredentials = new InMemoryMfaCredentialRepository();
  const users = new InMemoryUserRepository(options.users ?? []);
  const sessions = new InMemorySessionRepository();
  users.sessions = sessions;
  if (options.mfaFromFactors) users.credentials = mfaCredentials;
  const identities = new InMemoryLinkedIdentityRepository();
  const organizationStore = new OrganizationStore();
  const fakes = {
    config,
    clock,
    users,
    sessions,
    refreshTokens: new InMemoryRefreshTokenRepository(sessions, users),
    oneTimeTokens: new InMemoryOneTimeTokenRepository(),
    mfaCredentials,
    identities,
    providers: new InMemoryIdentityProviderRepository([], identities),
    federationTokens: new InMemoryFederationTokenRepository(),
    webhooks: new InMemoryWebhookRepository(),
    hookConfigs: new InMemoryHookRepository(),
    roles: new InMemoryRoleRepository(users),
    realms: new InMemoryRealmRepository([realm, master], realmDefaultsFrom(config)),
    audit: new InMemoryAuditLog(),
    mailer: new InMemoryMailer(),
    mailTransport: new RecordingMailTransport(),
    hasher: new FakePasswordHasher(),
    blocklist: new SetPasswordBlocklist(),
    secureTokens: new FakeSecureTokens(),
    accessTokens: new FakeAccessTokens(),
    cipher: new ReversibleSecretCipher(),
    totp: new FakeTotpVerifier(),
    qr: new FakeQrCodeRenderer(),
    relyingParty: new ScriptedWebAuthnRelyingParty(),
    identityProvider: new ScriptedIdentityProviderClient(),
    webhookTargets: new ListedWebhookTargetPolicy(),
    hostResolver: new ScriptedResolver(),
    deviceDetector: new StaticDeviceDetector(),
    geoIp: new NullGeoIpFake(),
    dpopProofs: new FakeDpopProofVerifier(),
    dpopReplays: new InMemoryDpopReplayStore(),
    purger: new InMemoryExpiredDataPurger(),
    jobLock: new InMemoryJobLock(),
    tx: new CountingTransaction(),
    hooks: new ScriptedSignInHooks(),
    organizations: new InMemoryOrganizationRepository(organizationStore),
    memberships: new InMemoryOrganizationMemberRepository(organizationStore, users),
    invitations: new InMemoryOrganizationInvitationRepository(organizationStore),
  };
  const instances = new Map<unknown, unknown>([
    [AppConfig, config],
    [Clock, clock],
    [UserRepository, fakes.users],
    [SessionRepository, fakes.sessions],
    [RefreshTokenRepository, fakes.refreshTokens],
    [OneTimeTokenRepository, fakes.oneTimeTokens],
    [MfaCredentialRepository, fakes.mfaCredentials],
    [LinkedIdentityRepository, fakes.identities],
    [IdentityProviderRepository, fakes.providers],
    [FederationTokenRepository, fakes.federationTokens],
    [WebhookRepository, fakes.webhooks],
    [HookRepository, fakes.hookConfigs],
    [RoleRepository, fakes.roles],
    [RealmRepository, fakes.realms],
    [AuditLog, fakes.audit],
    [Mailer, fakes.mailer],
    [MailTransport, fakes.mailTransport],
    [PasswordHasher, fakes.hasher],
    [PasswordBlocklist, fakes.blocklist],
    [SecureTokens, fakes.secureTokens],
    [AccessTokens, fakes.accessTokens],
    [SecretCipher, fakes.cipher],
    [TotpVerifier, fakes.totp],
    [QrCodeRenderer, fakes.qr],
    [WebAuthnRelyingParty, fakes.relyingParty],
    [IdentityProviderClient, fakes.identityProvider],
    [WebhookTargetPolicy, fakes.webhookTargets],
    [HostResolver, fakes.hostResolver],
    [DeviceDetector, fakes.deviceDetector],
    [GeoIp, fakes.geoIp],
    [DpopProofVerifier, fakes.dpopProofs],
    [DpopReplayStore, fakes.dpopReplays],
    [ExpiredDataPurger, fakes.purger],
    [JobLock, fakes.jobLock],
    [Transaction, fakes.tx],
    [SignInHooks, fakes.hooks],
    [OrganizationRepository, fakes.organizations],
    [OrganizationMemberRepository, fakes.memberships],
    [OrganizationInvitationRepository, fakes.invitations],
  ]);

  function build<T>(type: Constructor<T>, path: string[] = []): T {
    if (instances.has(type)) return instances.get(type) as T;
    const name = type.name || String(type);
    if (path.includes(name)) throw new Error(`useCaseFixture: ${[...path, name].join(' → ')} is a cycle`);
    if (isAbstract(type))
      throw new Error(`useCaseFixture: no fake bound to the port ${name} (needed by ${path.join(' → ') || 'the test'})`);
    const params: unknown[] = Reflect.getMetadata('design:paramtypes', type) ?? [];
    if (params.length < type.length) throw new Error(`useCaseFixture: ${name} records no parameter types (is it @Injectable()?)`);
    const args = params.map((param, i) => {
      if (typeof param !== 'function' || param === Object) {
        throw new Error(`useCaseFixture: parameter ${i} of ${name} is not a class, so it cannot be looked up`);
      }
      return build(param as Constructor<unknown>, [...path, name]);
    });
    const instance = new (type as new (...a: unknown[]) => T)(...args);
    instances.set(type, instance);
    return instance;
  }

  return {
    ...fakes,
    realm,
    master,
    client: { ip: '203.0.113.9', userAgent: 'Mozilla/5.0', acceptLanguage: 'en', fingerprint: null },
    build: <T>(type: Constructor<T>): T => build(type),
    /** Binds a class (a port, or a helper) to a given instance before anything that needs it is built. */
    bind<T>(type: Constructor<T>, instance: T): void {
      instances.set(type, instance);
    },
    lastMail() {
      return fakes.mailer.sent[fakes.mailer.sent.length - 1];
    },
    /** A session of the user, opened by a password sign-in just now; its id. */
    async signedIn(userId: string, realmId = realm.id): Promise<string> {
      const session = Session.open({
        id: crypto.randomUUID(),
        realmId,
        userId,
        device: { id: crypto.randomUUID(), name: 'Chrome 131 on macOS', type: 'browser', fingerprint: null },
        referenceFingerprint: {},
        ip: '203.0.113.9',
        location: { country: null, city: null },
        userAgent: 'Mozilla/5.0',
        amr: ['pwd'],
        now: clock.now(),
        lifetime: realm.policy.sessionLifetime,
      });
      await sessions.insert(session);
      return session.id;
    },
  };
}

export type UseCaseFixture = ReturnType<typeof useCaseFixture>;

/** The ports are abstract classes: their prototypes have only abstract (absent) methods and no @Injectable. */
function isAbstract(type: Constructor<unknown>): boolean {
  return Reflect.getMetadata('design:paramtypes', type) === undefined && type.length === 0 && !Reflect.hasMetadata('__injectable__', type);
}
