import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { decideAccount, decideLink, FederationRefusal } from '../../domain/federation/account-linking';
import { IdentityProvider } from '../../domain/federation/identity-provider';
import { Realm } from '../../domain/realm/realm';
import { splitName, User } from '../../domain/user/user';
import { AccountEmails } from '../account/account-emails';
import { AccountTakeover } from '../account/account-takeover';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { OrganizationSignIn } from '../organizations/organization-sign-in';
import { FederationTokenRepository } from '../ports/federation-token.repository';
import { IdentityProviderClient, ProviderClaims, ProviderError } from '../ports/identity-provider-client';
import { IdentityProviderRepository } from '../ports/identity-provider.repository';
import { IdentityInUseError, LinkedIdentityRepository } from '../ports/linked-identity.repository';
import { SecretCipher } from '../ports/secret-cipher';
import { SecureTokens } from '../ports/secure-tokens';
import { SignInHooks } from '../ports/sign-in-hooks';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { RealmDirectory } from '../realm/realm-directory';
import {
  federationRedirectUri,
  FlowState,
  LINK_CODE_TTL_SECONDS,
  LinkCodePayload,
  LOGIN_CODE_TTL_SECONDS,
  LoginCodePayload,
  withParams,
} from './federation-flow';
import { IdentityLinks } from './identity-links';

/** What the provider sent back to the callback. */
export interface FederationCallbackInput {
  alias: string;
  /** The callback's full URL as the provider called it (`iss`, `code`, `state` …). */
  callbackUrl: string;
  state: string | undefined;
  /** The provider's `error` parameter, when it refused or the user cancelled. */
  error: string | undefined;
  ip: string | null;
}

type Refusal = FederationRefusal | 'access_denied' | 'provider_error' | 'realm_disabled' | 'hook_denied' | 'hook_failed';

const DESCRIPTIONS: Record<Refusal, string> = {
  access_denied: 'The sign-in was cancelled at the identity provider',
  provider_error: 'The identity provider could not be reached or its answer could not be trusted',
  email_required: 'The identity provider did not give an email address',
  email_already_registered: 'An account with this email exists: sign in to it and link the provider from there',
  registration_disabled: 'Registration is closed in this realm',
  identity_in_use: 'This account at the provider is linked to another user',
  realm_disabled: 'This realm is disabled',
  hook_denied: 'The sign-in was refused',
  hook_failed: 'The sign-in could not be decided; try again',
};

@Injectable()
export class CompleteFederationUseCase {
  constructor(
    private readonly tokens: FederationTokenRepository,
    private readonly providers: IdentityProviderRepository,
    private readonly realms: RealmDirectory,
    private readonly client: IdentityProviderClient,
    private readonly identities: LinkedIdentityRepository,
    private readonly users: UserRepository,
    private readonly takeover: AccountTakeover,
    private readonly links: IdentityLinks,
    private readonly emails: AccountEmails,
    private readonly secureTokens: SecureTokens,
    private readonly cipher: SecretCipher,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly hooks: SignInHooks,
    private readonly organizations: OrganizationSignIn,
  ) {}

  /**
   * The provider's redirect: redeems its code, resolves the account (`decideAccount`, or
   * `decideLink` when a signed-in user links) and answers where to send the browser — `returnTo`
   * with a one-time login code, a one-time link code, or an `error`. Every refusal is audited.
   * @throws DomainError INVALID_VERIFICATION_TOKEN for an unknown, used, expired or foreign `state` (no redirect)
   */
  async execute(input: FederationCallbackInput): Promise<{ redirect: string }> {
    const now = this.clock.now();
    const token = input.state ? await this.tokens.consume(this.secureTokens.hash(input.state), 'state', now) : null;
    const provider = token ? await this.providers.findById(token.providerId) : null;
    const realm = token ? await this.realms.find(token.realmId) : null;
    if (!token || !provider || !realm || provider.alias !== input.alias || provider.realmId !== realm.id) {
      throw new DomainError('INVALID_VERIFICATION_TOKEN', 'The sign-in state is invalid or has expired; start again');
    }
    const flow = token.payload as unknown as FlowState;
    const refuse = async (reason: Refusal, userId: string | null = null, details: Record<string, unknown> = {}, description?: string) => {
      await this.audit.record({
        type: 'login.failed',
        realmId: realm.id,
        userId,
        ip: input.ip,
        at: now,
        details: { method: 'federated', provider: provider.alias, reason, ...details },
      });
      return { redirect: withParams(flow.returnTo, { error: reason, error_description: description ?? DESCRIPTIONS[reason] }) };
    };
    if (!realm.enabled) return refuse('realm_disabled');
    if (input.error)
      return refuse(input.error === 'access_denied' ? 'access_denied' : 'provider_error', null, {
        providerError: input.error.slice(0, 64),
      });
    if (!provider.enabled) return refuse('provider_error', null, { why: 'provider disabled' });

    let claims: ProviderClaims;
    try {
      const clientSecret = provider.clientSecretEncrypted ? await this.cipher.decrypt(provider.clientSecretEncrypted, provider.id) : null;
      claims = await this.client.redeem(
        { issuer: provider.issuer, clientId: provider.clientId, clientSecret, metadata: provider.metadata },
        {
          callbackUrl: input.callbackUrl,
          redirectUri: federationRedirectUri(this.config.apiUrl, provider.alias),
          state: input.state!,
          nonce: flow.nonce,
          codeVerifier: flow.providerVerifier,
        },
      );
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      return refuse('provider_error', null, { why: error.message });
    }

    try {
      if (flow.linkUserId) return await this.link(provider, claims, flow, now, refuse);
      const userId = await this.resolve(realm, provider, claims, input.ip, now);
      if (typeof userId !== 'string') return refuse(userId.refused, userId.userId ?? null);
      // The realm's decision before a session exists, here, so that a refusal reaches the app as this redirect's error.
      const user = await this.users.findById(realm.id, userId);
      const decision =
        user && this.hooks.beforeSignIn({ realm, user, method: 'federated', amr: ['fed'], ip: input.ip ?? '', provider: provider.alias });
      if (decision) await decision;
      await this.organizations.joinThroughProvider(realm.id, provider.alias, userId, input.ip);
      const payload: LoginCodePayload = {
        userId,
        codeChallenge: flow.codeChallenge,
        client: flow.client,
        provider: provider.alias,
        subject: claims.subject,
        ...(decision ? { hookAllowed: true } : {}),
      };
      const code = await this.issueCode('login_code', provider, payload, LOGIN_CODE_TTL_SECONDS, now);
      return { redirect: withParams(flow.returnTo, { code }) };
    } catch (error) {
      // Another sign-in linked the same account at the same moment.
      if (error instanceof IdentityInUseError) return refuse('identity_in_use');
      if (error instanceof DomainError && (error.code === 'HOOK_DENIED' || error.code === 'HOOK_FAILED')) {
        return refuse(error.code === 'HOOK_DENIED' ? 'hook_denied' : 'hook_failed', null, {}, error.message);
      }
      throw error;
    }
  }

  /** The user the sign-in lands on (linking, taking over or registering as the rules say), or why not. */
  private async resolve(
    realm: Realm,
    provider: IdentityProvider,
    claims: ProviderClaims,
    ip: string | null,
    now: Date,
  ): Promise<string | { refused: FederationRefusal; userId?: string }> {
    const linked = await this.identities.findBySubject(provider.id, claims.subject);
    const existing = !linked && claims.email ? await this.users.findByEmail(realm.id, claims.email) : null;
    const decision = decideAccount({
      linkedUserId: linked?.userId ?? null,
      account: { subject: claims.subject, email: claims.email, emailVerified: claims.emailVerified },
      trustEmailVerified: provider.trustEmailVerified,
      userWithEmail: existing
        ? { id: existing.id, emailVerified: existing.emailVerified, isAdministrator: existing.isAdministrator() }
        : null,
      registrationOpen: realm.settings.registration === 'open',
    });
    const identityDetails = { provider: provider.alias, subject: claims.subject };
    switch (decision.kind) {
      case 'sign-in':
        await this.identities.recordUse(linked!.id, claims.email, now);
        return decision.userId;
      case 'link':
        await this.tx.run(() => this.links.link(realm, provider, claims, existing!, { ip, now }, {}));
        return decision.userId;
      case 'take-over': {
        const claimed = await this.tx.run(async () => {
          // Under the row lock, as it is now: verified meanwhile, it is linked; an administrator's never.
          const user = await this.users.findByIdForUpdate(realm.id, decision.userId);
          if (!user || user.isAdministrator()) return false;
          if (user.emailVerified) {
            await this.links.link(realm, provider, claims, user, { ip, now }, {});
            return true;
          }
          await this.takeover.execute({ user, now, ip, event: { type: 'identity.linked', details: identityDetails } });
          // The squatter's profile went with the takeover; the provider's takes its place.
          applyProfile(user, claims, now);
          await this.users.save(user);
          await this.links.link(realm, provider, claims, user, { ip, now }, null);
          return true;
        });
        return claimed ? decision.userId : { refused: 'email_already_registered', userId: decision.userId };
      }
      case 'register': {
        const name = (claims.name ?? [claims.givenName, claims.familyName].filter(Boolean).join(' ')) || claims.email!.split('@')[0];
        const split = splitName(name);
        // The realm's decision before anything is written: refused, no account, no email.
        const admitted = this.hooks.beforeRegistration({
          realm,
          email: claims.email!,
          firstName: claims.givenName ?? split.firstName,
          lastName: claims.familyName ?? split.lastName,
          method: 'federated',
          provider: provider.alias,
          ip: ip ?? '',
        });
        if (admitted) await admitted;
        return this.tx.run(async () => {
          const user = User.register({
            id: crypto.randomUUID(),
            realmId: realm.id,
            email: claims.email!,
            name,
            passwordHash: null,
            emailVerified: decision.emailVerified,
            now,
          });
          applyProfile(user, claims, now);
          await this.users.insert(user);
          await this.audit.record({
            type: 'user.registered',
            realmId: realm.id,
            userId: user.id,
            ip,
            at: now,
            details: { method: 'federated', provider: provider.alias },
          });
          if (!user.emailVerified) await this.emails.sendVerification(realm, user, now);
          await this.links.link(realm, provider, claims, user, { ip, now }, {});
          return user.id;
        });
      }
      case 'refuse':
        return { refused: decision.reason, ...(existing ? { userId: existing.id } : {}) };
    }
  }

  /**
   * The provider's answer to a link a signed-in user started. Nothing is linked here: the browser
   * that comes back may not be the one that asked (an attacker can start a link from their own
   * account and lure a victim through the provider's pages). It gets a one-time link code, which
   * links only when the user who started it posts it with the verifier of the start's challenge
   * (`LinkIdentityUseCase`). An account already linked to someone else is refused at once.
   */
  private async link(
    provider: IdentityProvider,
    claims: ProviderClaims,
    flow: FlowState,
    now: Date,
    refuse: (reason: Refusal, userId?: string | null) => Promise<{ redirect: string }>,
  ): Promise<{ redirect: string }> {
    const linked = await this.identities.findBySubject(provider.id, claims.subject);
    const decision = decideLink({ linkedUserId: linked?.userId ?? null, callerId: flow.linkUserId! });
    if (decision.kind === 'refuse') return refuse(decision.reason, flow.linkUserId);
    const payload: LinkCodePayload = {
      userId: flow.linkUserId!,
      codeChallenge: flow.codeChallenge,
      provider: provider.alias,
      subject: claims.subject,
      email: claims.email,
    };
    const code = await this.issueCode('link_code', provider, payload, LINK_CODE_TTL_SECONDS, now);
    return { redirect: withParams(flow.returnTo, { link_code: code }) };
  }

  /** A one-time code handed back to the app, stored under its hash. */
  private async issueCode(
    kind: 'login_code' | 'link_code',
    provider: IdentityProvider,
    payload: LoginCodePayload | LinkCodePayload,
    ttlSeconds: number,
    now: Date,
  ): Promise<string> {
    const code = this.secureTokens.generate();
    await this.tokens.insert({
      tokenHash: this.secureTokens.hash(code),
      kind,
      realmId: provider.realmId,
      providerId: provider.id,
      payload: payload as unknown as Record<string, unknown>,
      createdAt: now,
      expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
    });
    return code;
  }
}

/** The provider's names and picture, where they are acceptable as a profile (else the registration's). */
function applyProfile(user: User, claims: ProviderClaims, now: Date): void {
  const attempt = (changes: Parameters<User['updateProfile']>[0]) => {
    try {
      user.updateProfile(changes, now);
    } catch (error) {
      // A provider's odd value is not a reason to refuse the sign-in; anything else is a fault.
      if (!(error instanceof DomainError)) throw error;
    }
  };
  if (claims.givenName || claims.familyName) attempt({ firstName: claims.givenName ?? '', lastName: claims.familyName ?? '' });
  if (claims.picture?.startsWith('https://')) attempt({ avatar: claims.picture });
}
