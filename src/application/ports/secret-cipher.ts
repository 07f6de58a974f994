/**
 * Authenticated encryption of secrets that must be read back (TOTP secrets). The key comes from
 * configuration or is generated once and kept server-side.
 */
export abstract class SecretCipher {
  /** Encrypts `plaintext`, bound to `context` (e.g. the owner's id) so it cannot be moved to another row. */
  abstract encrypt(plaintext: string, context: string): Promise<string>;
  /** @throws Error when the value was tampered with, bound to another context, or made under another key */
  abstract decrypt(ciphertext: string, context: string): Promise<string>;
}
