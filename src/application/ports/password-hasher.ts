/** Slow, salted password hashing. Implementations pre-hash so no byte of the password is ignored. */
export abstract class PasswordHasher {
  abstract hash(password: string): Promise<string>;
  abstract verify(password: string, hash: string): Promise<boolean>;
  /** Spends the time of one verification against a dummy hash (unknown email: same timing). */
  abstract verifyDummy(password: string): Promise<false>;
}
