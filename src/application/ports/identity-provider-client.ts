/** What the client needs to talk to one provider. */
export interface ProviderConnection {
  issuer: string;
  clientId: string;
  /** Null for a public client (PKCE alone, `token_endpoint_auth_method: none`). */
  clientSecret: string | null;
  /** The provider's discovery document. */
  metadata: Record<string, unknown>;
}

/** The account a provider vouched for in a validated ID token (and its userinfo). */
export interface ProviderClaims {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  givenName: string | null;
  familyName: string | null;
  name: string | null;
  picture: string | null;
}

/** The provider could not be reached or what it answered is not to be trusted. Says why, for the audit trail. */
export class ProviderError extends Error {}

/** The OpenID Connect relying party: authorization code flow with PKCE, state and nonce. */
export abstract class IdentityProviderClient {
  /**
   * Reads `<issuer>/.well-known/openid-configuration`.
   * @throws DomainError VALIDATION_FAILED (field `issuer`): refused address, unreachable, not JSON, or naming another issuer
   */
  abstract discover(issuer: string): Promise<Record<string, unknown>>;

  /** The provider's authorization URL for a sign-in (`response_type=code`, S256). */
  abstract authorizationUrl(
    connection: ProviderConnection,
    request: { redirectUri: string; scopes: string[]; state: string; nonce: string; codeChallenge: string },
  ): string;

  /**
   * Redeems the code the provider sent back to `callbackUrl` (checks the `iss` response parameter
   * when present, the state, the ID token's signature, `iss`, `aud`, `exp` and nonce) and reads
   * userinfo when the ID token lacks the email.
   * @throws ProviderError
   */
  abstract redeem(
    connection: ProviderConnection,
    request: { callbackUrl: string; redirectUri: string; state: string; nonce: string; codeVerifier: string },
  ): Promise<ProviderClaims>;
}
