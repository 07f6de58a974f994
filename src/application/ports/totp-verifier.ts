/** Time-based one-time passwords (RFC 6238: SHA-1, 6 digits, 30-second steps). */
export abstract class TotpVerifier {
  /** A new secret: 20 bytes (160 bits) from a CSPRNG, base32 without padding. */
  abstract generateSecret(): string;
  /** The `otpauth://` key URI authenticator apps read (label `issuer:account`, issuer parameter set). */
  abstract keyUri(input: { secret: string; issuer: string; account: string }): string;
  /**
   * The time step whose code equals `code`, looking at the step of `now` and one step either
   * side; null when none matches. Stateless: replay protection is the caller's (stored step).
   */
  abstract matchingStep(secret: string, code: string, now: Date): number | null;
}
