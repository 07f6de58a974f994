import { DomainError } from '../errors';

export const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
const ALIAS = /^[a-z0-9][a-z0-9-]{0,62}$/;
// RFC 6749 §3.3 scope-token characters.
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;
const VISIBLE = /^[\x21-\x7E]{1,255}$/;

export interface IdentityProviderState {
  id: string;
  realmId: string;
  alias: string;
  displayName: string;
  /** The issuer as the provider's discovery document names it. */
  issuer: string;
  clientId: string;
  /** Encrypted (SecretCipher, bound to the provider's id); null for a public client (PKCE alone). */
  clientSecretEncrypted: string | null;
  scopes: string[];
  enabled: boolean;
  trustEmailVerified: boolean;
  /** The provider's discovery document, read when the issuer was set. */
  metadata: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export interface IdentityProviderChange {
  displayName?: string;
  clientId?: string;
  scopes?: string[];
  enabled?: boolean;
  trustEmailVerified?: boolean;
}

/** @throws DomainError VALIDATION_FAILED */
function checkDisplayName(value: string): string {
  const trimmed = value.trim();
  if (trimmed.length < 1 || trimmed.length > 100 || /\p{Cc}/u.test(trimmed)) {
    throw DomainError.validation('displayName', 'must be 1 to 100 characters without control characters');
  }
  return trimmed;
}

/** @throws DomainError VALIDATION_FAILED */
function checkClientId(value: string): string {
  if (!VISIBLE.test(value)) throw DomainError.validation('clientId', 'must be 1 to 255 visible ASCII characters');
  return value;
}

/** @throws DomainError VALIDATION_FAILED */
function checkScopes(scopes: string[]): string[] {
  if (scopes.length > 20 || scopes.some((s) => !SCOPE.test(s))) throw DomainError.validation('scopes', 'must be at most 20 scope tokens');
  if (!scopes.includes('openid')) throw DomainError.validation('scopes', 'must include openid');
  return [...new Set(scopes)];
}

/** An OpenID Connect provider a realm's users may sign in with. */
export class IdentityProvider {
  private constructor(private state: IdentityProviderState) {}

  /**
   * @throws DomainError VALIDATION_FAILED for a malformed alias, display name, client id or scopes
   *   (which must include `openid`)
   */
  static create(
    input: Omit<IdentityProviderState, 'scopes' | 'enabled' | 'trustEmailVerified' | 'updatedAt'> & {
      scopes?: string[];
      enabled?: boolean;
      trustEmailVerified?: boolean;
    },
  ): IdentityProvider {
    if (!ALIAS.test(input.alias)) throw DomainError.validation('alias', 'must match ^[a-z0-9][a-z0-9-]{0,62}$');
    return new IdentityProvider({
      ...input,
      displayName: checkDisplayName(input.displayName),
      clientId: checkClientId(input.clientId),
      scopes: checkScopes(input.scopes ?? DEFAULT_SCOPES),
      enabled: input.enabled ?? true,
      trustEmailVerified: input.trustEmailVerified ?? true,
      metadata: { ...input.metadata },
      updatedAt: input.createdAt,
    });
  }

  static restore(state: IdentityProviderState): IdentityProvider {
    return new IdentityProvider({ ...state, scopes: [...state.scopes], metadata: { ...state.metadata } });
  }

  get id(): string {
    return this.state.id;
  }
  get realmId(): string {
    return this.state.realmId;
  }
  get alias(): string {
    return this.state.alias;
  }
  get displayName(): string {
    return this.state.displayName;
  }
  get issuer(): string {
    return this.state.issuer;
  }
  get clientId(): string {
    return this.state.clientId;
  }
  get clientSecretEncrypted(): string | null {
    return this.state.clientSecretEncrypted;
  }
  get hasClientSecret(): boolean {
    return this.state.clientSecretEncrypted !== null;
  }
  get scopes(): string[] {
    return [...this.state.scopes];
  }
  get enabled(): boolean {
    return this.state.enabled;
  }
  get trustEmailVerified(): boolean {
    return this.state.trustEmailVerified;
  }
  get metadata(): Record<string, unknown> {
    return { ...this.state.metadata };
  }
  get createdAt(): Date {
    return this.state.createdAt;
  }
  get updatedAt(): Date {
    return this.state.updatedAt;
  }

  /** @throws DomainError VALIDATION_FAILED */
  update(change: IdentityProviderChange, now: Date): void {
    this.state = {
      ...this.state,
      ...(change.displayName !== undefined ? { displayName: checkDisplayName(change.displayName) } : {}),
      ...(change.clientId !== undefined ? { clientId: checkClientId(change.clientId) } : {}),
      ...(change.scopes !== undefined ? { scopes: checkScopes(change.scopes) } : {}),
      ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
      ...(change.trustEmailVerified !== undefined ? { trustEmailVerified: change.trustEmailVerified } : {}),
      updatedAt: now,
    };
  }

  /** A new issuer with its discovery document (read and checked by the caller). */
  moveTo(issuer: string, metadata: Record<string, unknown>, now: Date): void {
    this.state = { ...this.state, issuer, metadata: { ...metadata }, updatedAt: now };
  }

  /** The encrypted client secret, or null for a public client. */
  setClientSecret(encrypted: string | null, now: Date): void {
    this.state = { ...this.state, clientSecretEncrypted: encrypted, updatedAt: now };
  }

  snapshot(): IdentityProviderState {
    return IdentityProvider.restore(this.state).state;
  }
}
