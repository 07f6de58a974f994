/** Sign-in codes sent by email (and the link that goes with each). */

/** 8 digits: 10^8 codes, 5 tries each and 3 codes per address per 15 minutes keep a guess below 2^-20. */
export const EMAIL_CODE_DIGITS = 8;
export const EMAIL_CODE_TTL_SECONDS = 600;
/** The 5th wrong code kills the code (and its link). */
export const EMAIL_CODE_MAX_ATTEMPTS = 5;

/** What the keyed hash of a code is taken over: the code bound to its own token row. */
export function emailCodeHashInput(tokenHash: string, code: string): string {
  return `email-code:${tokenHash}:${code}`;
}
