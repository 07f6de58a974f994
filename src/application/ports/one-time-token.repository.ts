export type OneTimeTokenKind = 'email_verification' | 'password_reset' | 'mfa' | 'webauthn_registration';

export interface OneTimeToken {
  tokenHash: string;
  realmId: string;
  userId: string;
  kind: OneTimeTokenKind;
  /** The address an email token was sent to; a changed address voids it. */
  email: string | null;
  payload: Record<string, unknown>;
  attempts: number;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export abstract class OneTimeTokenRepository {
  abstract insert(token: OneTimeToken): Promise<void>;
  /** Voids the user's unused tokens of a kind (a new one replaces them). */
  abstract voidUnused(userId: string, kind: OneTimeTokenKind, now: Date): Promise<void>;
  abstract find(tokenHash: string, kind: OneTimeTokenKind): Promise<OneTimeToken | null>;
  /** Marks the token used if it is still unused and unexpired; exactly one concurrent caller gets true. */
  abstract consume(tokenHash: string, now: Date): Promise<boolean>;
  /**
   * Counts one wrong attempt; returns the new count, or null if the token is used, expired or unknown.
   * Atomic, so parallel guesses cannot exceed the limit.
   */
  abstract recordFailedAttempt(tokenHash: string, now: Date, maxAttempts: number): Promise<number | null>;
  abstract updatePayload(tokenHash: string, payload: Record<string, unknown>): Promise<void>;
}
