import {
  IdentityProviderClient,
  ProviderClaims,
  ProviderConnection,
  ProviderError,
} from '../../src/application/ports/identity-provider-client';
import { DomainError } from '../../src/domain/errors';

type RedeemRequest = Parameters<IdentityProviderClient['redeem']>[1];

/** The account a provider vouches for, with defaults a test overrides. */
export function providerClaims(overrides: Partial<ProviderClaims> = {}): ProviderClaims {
  return {
    subject: 'sub-1',
    email: 'ada@example.com',
    emailVerified: true,
    givenName: null,
    familyName: null,
    name: null,
    picture: null,
    ...overrides,
  };
}

/**
 * A provider whose answers the test writes: discovery documents per issuer, and the next
 * redemption's claims or failure. Like the real client it refuses a callback whose `state`
 * is not the one the flow holds. Requests are kept for the test to read.
 */
export class ScriptedIdentityProviderClient extends IdentityProviderClient {
  readonly documents = new Map<string, Record<string, unknown>>();
  readonly redeemed: { connection: ProviderConnection; request: RedeemRequest }[] = [];
  private readonly answers: (ProviderClaims | ProviderError)[] = [];

  /** Makes `issuer` discoverable; its document names it as the issuer unless `metadata` says otherwise. */
  publish(issuer: string, metadata: Record<string, unknown> = {}): this {
    this.documents.set(issuer, { issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, ...metadata });
    return this;
  }

  /** The next redemption vouches for this account. */
  willVouchFor(claims: Partial<ProviderClaims> = {}): this {
    this.answers.push(providerClaims(claims));
    return this;
  }

  /** The next redemption fails as an unreachable or untrustworthy provider does. */
  willFail(reason: string): this {
    this.answers.push(new ProviderError(reason));
    return this;
  }

  async discover(issuer: string): Promise<Record<string, unknown>> {
    const document = this.documents.get(issuer);
    if (!document) throw DomainError.validation('issuer', `no discovery document at ${issuer}`);
    return { ...document };
  }

  authorizationUrl(
    connection: ProviderConnection,
    request: { redirectUri: string; scopes: string[]; state: string; nonce: string; codeChallenge: string },
  ): string {
    const endpoint =
      typeof connection.metadata.authorization_endpoint === 'string'
        ? connection.metadata.authorization_endpoint
        : `${connection.issuer}/authorize`;
    const url = new URL(endpoint);
    const params = {
      response_type: 'code',
      client_id: connection.clientId,
      redirect_uri: request.redirectUri,
      scope: request.scopes.join(' '),
      state: request.state,
      nonce: request.nonce,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url.href;
  }

  async redeem(connection: ProviderConnection, request: RedeemRequest): Promise<ProviderClaims> {
    this.redeemed.push({ connection, request });
    const returnedState = new URL(request.callbackUrl).searchParams.get('state');
    if (returnedState !== null && returnedState !== request.state) throw new ProviderError('state mismatch');
    const answer = this.answers.shift();
    if (!answer) throw new Error('ScriptedIdentityProviderClient: no answer scripted for this redemption');
    if (answer instanceof ProviderError) throw answer;
    return { ...answer };
  }
}
