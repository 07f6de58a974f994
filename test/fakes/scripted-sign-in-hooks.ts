import { SignInAttempt, SignInHooks, TokenRequest } from '../../src/application/ports/sign-in-hooks';

/**
 * Sign-in hooks a test scripts: none by default (null, as a realm without hooks), else a
 * decision and claims it chooses. Every call is kept.
 */
export class ScriptedSignInHooks extends SignInHooks {
  readonly attempts: SignInAttempt[] = [];
  readonly tokenRequests: TokenRequest[] = [];
  decide: ((attempt: SignInAttempt) => Promise<void>) | null = null;
  claims: ((request: TokenRequest) => Promise<Record<string, unknown> | null>) | null = null;

  beforeSignIn(attempt: SignInAttempt): Promise<void> | null {
    this.attempts.push(attempt);
    return this.decide ? this.decide(attempt) : null;
  }

  tokenClaims(request: TokenRequest): Promise<Record<string, unknown> | null> | null {
    this.tokenRequests.push(request);
    return this.claims ? this.claims(request) : null;
  }
}
