import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { ClientContext } from '../sign-in/client-context';
import { RecentAuthentication } from '../sign-in/recent-authentication';
import { ReturnUrls } from '../account/return-urls';
import { Clock } from '../ports/clock';
import { FederationTokenRepository } from '../ports/federation-token.repository';
import { IdentityProviderClient } from '../ports/identity-provider-client';
import { IdentityProviderRepository } from '../ports/identity-provider.repository';
import { SecretCipher } from '../ports/secret-cipher';
import { SecureTokens } from '../ports/secure-tokens';
import { federationRedirectUri, FlowState, STATE_TTL_SECONDS } from './federation-flow';

export interface StartFederationInput {
  realm: Realm;
  alias: string;
  returnTo: string;
  codeChallenge: string;
  client: ClientContext;
  /** The signed-in user who links the provider's account instead of signing in. */
  linkUserId?: string;
  /** With `linkUserId`: the session that asks, which must have signed in recently. */
  linkSessionId?: string;
}

@Injectable()
export class StartFederationUseCase {
  constructor(
    private readonly providers: IdentityProviderRepository,
    private readonly client: IdentityProviderClient,
    private readonly tokens: FederationTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly cipher: SecretCipher,
    private readonly returnUrls: ReturnUrls,
    private readonly recentSignIn: RecentAuthentication,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * A single-use `state` (10 minutes) holding the flow, and the provider's authorization URL.
   * A link adds a way to sign in, so, like a new security key, it starts only from a recent
   * sign-in (`RecentAuthentication`): a stolen session kept alive by refreshes links nothing.
   * @throws DomainError IDENTITY_PROVIDER_NOT_FOUND (unknown or disabled) | VALIDATION_FAILED (`returnTo`, `codeChallenge`) |
   *   FORBIDDEN (a link from a flagged session or without a recent sign-in)
   */
  async execute(input: StartFederationInput): Promise<{ authorizationUrl: string }> {
    const { realm } = input;
    const provider = await this.providers.findByAlias(realm.id, input.alias);
    if (!provider?.enabled) throw new DomainError('IDENTITY_PROVIDER_NOT_FOUND', 'Identity provider not found');
    this.returnUrls.assertAllowed(realm, input.returnTo);
    if (!/^[A-Za-z0-9_-]{43}$/.test(input.codeChallenge)) {
      throw DomainError.validation('codeChallenge', 'must be the base64url S256 challenge of a code verifier (43 characters)');
    }
    if (input.linkUserId) {
      if (!input.linkSessionId) throw new DomainError('INVALID_TOKEN', 'Linking needs the signed-in user’s session');
      await this.recentSignIn.require(realm.id, input.linkSessionId, 'Linking an account at an identity provider');
    }
    const now = this.clock.now();
    const state = this.secureTokens.generate();
    const flow: FlowState = {
      returnTo: input.returnTo,
      codeChallenge: input.codeChallenge,
      providerVerifier: this.secureTokens.generate(),
      nonce: this.secureTokens.generate(),
      client: input.client,
      ...(input.linkUserId ? { linkUserId: input.linkUserId } : {}),
    };
    await this.tokens.insert({
      tokenHash: this.secureTokens.hash(state),
      kind: 'state',
      realmId: realm.id,
      providerId: provider.id,
      payload: flow as unknown as Record<string, unknown>,
      createdAt: now,
      expiresAt: new Date(now.getTime() + STATE_TTL_SECONDS * 1000),
    });
    const clientSecret = provider.clientSecretEncrypted ? await this.cipher.decrypt(provider.clientSecretEncrypted, provider.id) : null;
    const authorizationUrl = this.client.authorizationUrl(
      { issuer: provider.issuer, clientId: provider.clientId, clientSecret, metadata: provider.metadata },
      {
        redirectUri: federationRedirectUri(this.config.apiUrl, provider.alias),
        scopes: provider.scopes,
        state,
        nonce: flow.nonce,
        codeChallenge: this.secureTokens.pkceChallenge(flow.providerVerifier),
      },
    );
    return { authorizationUrl };
  }
}
