import { RegistrationAttempt, SignInAttempt, SignInHooks, TokenRequest } from '../../src/application/ports/sign-in-hooks';

/**
 * Sign-in hooks a test scripts: none by default (null, as a realm without hooks), else a
 * decision and claims it chooses. Every call is kept.
 */
export class ScriptedSignInHooks extends SignInHooks {
  readonly registrations: RegistrationAttempt[] = [];
  readonly attempts: SignInAttempt[] = [];
  readonly tokenRequests: TokenRequest[] = [];
  admit: ((attempt: RegistrationAttempt) => Promise<void>) | null = null;
  decide: ((attempt: SignInAttempt) => Promise<void>) | null = null;
  claims: ((request: TokenRequest) => Promise<Record<string, unknown> | null>) | null = null;

  beforeRegistration(attempt: RegistrationAttempt): Promise<void> | null {
    this.registrations.push(attempt);
    return this.admit ? this.admit(attempt) : null;
  }

  beforeSignIn(attempt: SignInAttempt): Promise<void> | null {
    this.attempts.push(attempt);
    return this.decide ? this.decide(attempt) : null;
  }

  tokenClaims(request: TokenRequest): Promise<Record<string, unknown> | null> | null {
    this.tokenRequests.push(request);
    return this.claims ? this.claims(request) : null;
  }
}
