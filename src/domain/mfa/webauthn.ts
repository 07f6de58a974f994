import { DomainError } from '../errors';

/** Name of a WebAuthn credential when the user gives none. */
export const DEFAULT_CREDENTIAL_NAME = 'Security key';
/** Name of a passkey when the user gives none. */
export const DEFAULT_PASSKEY_NAME = 'Passkey';

/**
 * The signature-counter rule of WebAuthn §7.2 (step 21): when either the stored or the received
 * counter is non-zero, the received one must be greater. A regression means the credential was
 * probably cloned, so the assertion is refused.
 */
export function signCountAcceptable(stored: number, received: number): boolean {
  if (stored === 0 && received === 0) return true;
  return received > stored;
}

/**
 * A credential's display name: trimmed, 1–64 characters, no control characters.
 * @throws DomainError VALIDATION_FAILED (field `name`)
 */
export function credentialName(name: string | undefined | null, passkey = false): string {
  if (name === undefined || name === null) return passkey ? DEFAULT_PASSKEY_NAME : DEFAULT_CREDENTIAL_NAME;
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 64) throw DomainError.validation('name', 'must be 1 to 64 characters');
  if (/\p{Cc}/u.test(trimmed)) throw DomainError.validation('name', 'must not contain control characters');
  return trimmed;
}
