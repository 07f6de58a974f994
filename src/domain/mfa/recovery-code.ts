/** Recovery codes: 10 single-use codes, shown once, kept only as hashes. */
export const RECOVERY_CODE_COUNT = 10;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** 16 base32 characters: 80 bits, so a stolen hash cannot be brute-forced back to its code. */
const CODE_LENGTH = 16;

/**
 * Builds a code from CSPRNG output given as base64url text (≥ 16 characters, each 6 uniform
 * bits): each character keeps 5 of its bits, so the code stays uniform. Shown as `xxxx-xxxx-xxxx-xxxx`.
 */
export function recoveryCodeFrom(randomBase64url: string): string {
  if (randomBase64url.length < CODE_LENGTH) throw new Error('not enough randomness for a recovery code');
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i += 1) {
    const value = BASE64URL.indexOf(randomBase64url[i]);
    if (value < 0) throw new Error('randomness must be base64url');
    code += ALPHABET[value % 32];
  }
  return code.toLowerCase().match(/.{4}/g)!.join('-');
}

/**
 * The canonical form a code is hashed in: case, spaces and dashes do not matter, so a code
 * typed as `ABCD EFGH …` matches. Returns null for anything that cannot be a code.
 */
export function normaliseRecoveryCode(input: string): string | null {
  const compact = input.replace(/[\s-]/g, '').toUpperCase();
  if (compact.length !== CODE_LENGTH) return null;
  for (const char of compact) if (!ALPHABET.includes(char)) return null;
  return compact;
}
