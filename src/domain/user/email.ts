import { DomainError } from '../errors';

// Deliberately plain: one @, no whitespace or control characters (no header injection), a dotted domain.
const EMAIL = /^[^\s@\p{Cc}"<>()[\]\\,;:]+@[^\s@\p{Cc}"<>()[\]\\,;:]+\.[^\s@\p{Cc}"<>()[\]\\,;:]{2,}$/u;

/**
 * An email address normalised as the API says — trimmed and lower-cased — and in Unicode
 * NFC (RFC 6530 §10.1), so `é` typed precomposed or decomposed is one address for uniqueness,
 * lookups and the per-account failure counter.
 */
export class Email {
  private constructor(readonly value: string) {}

  /**
   * @throws DomainError VALIDATION_FAILED when the address is longer than 254 characters or malformed
   */
  static parse(raw: string, field = 'email'): Email {
    const value = Email.normalise(raw);
    if (value.length > 254) throw DomainError.validation(field, 'must be at most 254 characters');
    if (!EMAIL.test(value)) throw DomainError.validation(field, 'must be an email');
    return new Email(value);
  }

  /** Normalises without validating, for lookups where a malformed address simply finds nothing. */
  static normalise(raw: string): string {
    return raw.normalize('NFC').trim().toLowerCase();
  }

  get localPart(): string {
    return this.value.slice(0, this.value.indexOf('@'));
  }
}
