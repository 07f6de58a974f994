/** A TOTP secret of a user; pending until `confirmedAt` is set. */
export interface TotpCredential {
  userId: string;
  /** The base32 secret, encrypted by `SecretCipher`; never stored in clear. */
  secretEncrypted: string;
  confirmedAt: Date | null;
  /** The last accepted time step (replay guard, RFC 6238 §5.2); 0 before any use. */
  lastUsedStep: number;
  createdAt: Date;
}

/** Why a WebAuthn credential was disabled. */
export type WebauthnDisabledReason = 'counter_regression';

export interface WebauthnCredential {
  /** The credential id, base64url; unique across every user. */
  id: string;
  userId: string;
  name: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  deviceType: string | null;
  backedUp: boolean;
  /** Registered as a passkey (discoverable, user-verified): it may sign in on its own, without a password. */
  passkey: boolean;
  createdAt: Date;
  lastUsedAt: Date | null;
  /**
   * When the credential was disabled (its signature counter went back: a clone may exist); a
   * disabled credential answers no assertion until its owner removes it or MFA is reset.
   */
  disabledAt: Date | null;
  /** Why it was disabled (`counter_regression`); null while it is enabled. */
  disabledReason: WebauthnDisabledReason | null;
}

/** The second factors of users: TOTP secrets, WebAuthn credentials and recovery codes. */
export abstract class MfaCredentialRepository {
  abstract findTotp(userId: string): Promise<TotpCredential | null>;
  /** Writes a pending TOTP secret, replacing a pending one; a confirmed one is left untouched (returns false). */
  abstract savePendingTotp(credential: TotpCredential): Promise<boolean>;
  /** Confirms the pending secret and records its first accepted step; false when none is pending. */
  abstract confirmTotp(userId: string, step: number, now: Date): Promise<boolean>;
  /**
   * Advances the last accepted step to `step` if it is greater (a single UPDATE … WHERE
   * last_used_step < step): of concurrent callers presenting one code exactly one gets true.
   */
  abstract advanceTotpStep(userId: string, step: number): Promise<boolean>;
  /** Removes the TOTP secret, pending or confirmed; false when there was none. */
  abstract deleteTotp(userId: string): Promise<boolean>;

  abstract listWebauthn(userId: string): Promise<WebauthnCredential[]>;
  abstract findWebauthn(credentialId: string): Promise<WebauthnCredential | null>;
  /** @throws DomainError VALIDATION_FAILED when the credential id is already registered (to anyone) */
  abstract insertWebauthn(credential: WebauthnCredential): Promise<void>;
  /**
   * Stores a new signature counter if the stored one is still `previous` and the credential is
   * not disabled (atomic compare-and-set), and stamps `lastUsedAt`; false when a concurrent use
   * moved it first or it was disabled meanwhile.
   */
  abstract recordWebauthnUse(credentialId: string, previous: number, counter: number, now: Date): Promise<boolean>;
  /**
   * Disables an enabled credential (a single UPDATE … WHERE disabled_at IS NULL): of concurrent
   * callers exactly one gets true; false when it is already disabled or does not exist.
   */
  abstract disableWebauthn(credentialId: string, reason: WebauthnDisabledReason, now: Date): Promise<boolean>;
  /** Removes one credential of the user; false when the user has no such credential. */
  abstract deleteWebauthn(userId: string, credentialId: string): Promise<boolean>;

  /** Replaces every recovery code of the user with the given hashes. */
  abstract replaceRecoveryCodes(userId: string, codeHashes: string[], now: Date): Promise<void>;
  /** Marks an unused code used; exactly one concurrent caller gets true. */
  abstract consumeRecoveryCode(userId: string, codeHash: string, now: Date): Promise<boolean>;
  abstract countUnusedRecoveryCodes(userId: string): Promise<number>;
  abstract deleteRecoveryCodes(userId: string): Promise<void>;

  /** Removes every factor of the user: TOTP (pending or not), WebAuthn credentials, recovery codes. */
  abstract deleteAllForUser(userId: string): Promise<void>;
}
