export type OneTimeTokenKind =
  'email_verification' | 'password_reset' | 'mfa' | 'webauthn_registration' | 'passkey_challenge' | 'email_code';

export interface OneTimeToken {
  tokenHash: string;
  realmId: string;
  /** Null only for kinds asked for before anyone is known: `passkey_challenge`, and `email_code` to an address without an account. */
  userId: string | null;
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
  /** Voids the unused tokens of a kind sent to an address of the realm (a newer one replaces them). */
  abstract voidUnusedForEmail(realmId: string, email: string, kind: OneTimeTokenKind, now: Date): Promise<void>;
  /** The newest token of a kind sent to an address of the realm, used or not; null when none. */
  abstract findLatestForEmail(realmId: string, email: string, kind: OneTimeTokenKind): Promise<OneTimeToken | null>;
  /**
   * Takes one of the token's `maxAttempts` tries before the secret is compared: returns the
   * try's number (1-based), or null when the token is used, expired, unknown or out of tries.
   * Atomic, so parallel guesses never get more tries than that between them, whatever they present.
   */
  abstract reserveAttempt(tokenHash: string, now: Date, maxAttempts: number): Promise<number | null>;
  /**
   * Marks the flag `payload[flag]` true if it is not yet: exactly one concurrent caller gets
   * true, and only while the token is unused and unexpired.
   */
  abstract setPayloadFlag(tokenHash: string, flag: string, now: Date): Promise<boolean>;
}
