import { Realm } from '../../domain/realm/realm';
import { User } from '../../domain/user/user';

/** A self-service account about to be created (nothing is written yet). */
export interface RegistrationAttempt {
  realm: Realm;
  email: string;
  firstName: string;
  lastName: string;
  /** How the account comes to be: `password` (POST /register), `federated`, `email-code`, `openid-provider`. */
  method: string;
  /** The identity provider's alias, for `federated`. */
  provider?: string;
  /** The OpenID provider's client the user signs up at. */
  clientId?: string;
  ip: string;
}

/** A sign-in whose first factor is proven, before its session (or its second step) exists. */
export interface SignInAttempt {
  realm: Realm;
  user: User;
  /** How the user signs in: `password`, `passkey`, `federated`, `email-code` … */
  method: string;
  /** What the factor proved (RFC 8176). */
  amr: readonly string[];
  ip: string;
  userAgent?: string | null;
  /** The identity provider's alias, for `federated`. */
  provider?: string;
  /** The OpenID provider's client the user signs in at. */
  clientId?: string;
}

/** An access token about to be issued for a user's session (a sign-in, a second step, a refresh). */
export interface TokenRequest {
  realm: Realm;
  user: User;
  sessionId: string;
  amr: readonly string[];
  /** The OpenID provider's client the token is for (absent for the service's own tokens). */
  clientId?: string;
  scope?: string;
  /** The organization the token is for, when there is one. */
  organization?: Record<string, unknown>;
}

/**
 * Where a realm's own rules join every sign-up, every sign-in and every access token: a decision
 * before an account is created, a decision before a sign-in goes on, and claims of the realm's
 * own in the access token. Each call answers null when the realm asks for nothing, so that a
 * realm without rules pays neither a statement nor a promise on its hot paths.
 */
export abstract class SignInHooks {
  /**
   * Before a self-service account is created (before anything is written): a promise that
   * rejects with a DomainError to refuse it, or null when nothing is to be asked.
   * @throws DomainError HOOK_DENIED | HOOK_FAILED (through the promise)
   */
  abstract beforeRegistration(attempt: RegistrationAttempt): Promise<void> | null;
  /**
   * Before a sign-in continues (after its first factor, before any second step or session): a
   * promise that rejects with a DomainError to refuse it, or null when nothing is to be asked.
   * @throws DomainError HOOK_DENIED | HOOK_FAILED (through the promise)
   */
  abstract beforeSignIn(attempt: SignInAttempt): Promise<void> | null;
  /**
   * Extra claims for the access token, or null. The token's own claims (`iss`, `sub`, `realm`,
   * `sid`, `roles`, `amr`, `cnf` …) always win over them.
   * @throws DomainError HOOK_FAILED (through the promise)
   */
  abstract tokenClaims(request: TokenRequest): Promise<Record<string, unknown> | null> | null;
}

/** No realm asks for anything: every sign-up and sign-in goes on, tokens carry only their own claims. */
export class NoSignInHooks extends SignInHooks {
  beforeRegistration(): null {
    return null;
  }

  beforeSignIn(): null {
    return null;
  }

  tokenClaims(): null {
    return null;
  }
}
