import { DomainError } from '../errors';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;

/** NFKC, as hashing and the length rule both see the password. */
export function normalisePassword(password: string): string {
  return password.normalize('NFKC');
}

export interface PasswordContext {
  email?: string;
  /** Words an attacker would try first for this account: realm and service names. */
  contextWords?: string[];
  /** The realm's minimum length (PASSWORD_MIN_LENGTH up to PASSWORD_MAX_LENGTH); 8 when absent. */
  minLength?: number;
}

/**
 * The password rules of the auth API: 8 (or the realm's minimum) to 128 Unicode code points after NFKC, not the email,
 * not a common password, not built from the account's own context (email local part).
 * No composition rules (NIST 800-63B §5.1.1.2).
 * @throws DomainError VALIDATION_FAILED with a reason on `field`
 */
export function assertAcceptablePassword(
  password: string,
  isCommon: (candidate: string) => boolean,
  context: PasswordContext = {},
  field = 'password',
): void {
  const normalised = normalisePassword(password);
  const length = [...normalised].length;
  const minLength = Math.min(Math.max(context.minLength ?? PASSWORD_MIN_LENGTH, PASSWORD_MIN_LENGTH), PASSWORD_MAX_LENGTH);
  if (length < minLength) {
    throw DomainError.validation(field, `must be at least ${minLength} characters`);
  }
  if (length > PASSWORD_MAX_LENGTH) {
    throw DomainError.validation(field, `must be at most ${PASSWORD_MAX_LENGTH} characters`);
  }
  const lower = normalised.toLowerCase();
  const email = context.email?.trim().toLowerCase();
  if (email && lower === email) throw DomainError.validation(field, 'must not be the email address');
  if (isCommon(lower)) throw DomainError.validation(field, 'is too common; choose a less guessable password');
  const words = [email ? email.slice(0, email.indexOf('@')) : '', ...(context.contextWords ?? [])]
    .map((word) => word.toLowerCase())
    .filter((word) => word.length >= 4);
  // "alice.smith2024" for alice.smith@…: the account's own name plus digits or symbols.
  const stripped = lower.replace(/[^\p{L}]+/gu, '');
  for (const word of words) {
    const wordLetters = word.replace(/[^\p{L}]+/gu, '');
    if (wordLetters.length >= 4 && stripped === wordLetters) {
      throw DomainError.validation(field, 'must not be based on the email address or service name');
    }
  }
}
