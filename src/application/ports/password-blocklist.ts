/** Common and breached passwords. */
export abstract class PasswordBlocklist {
  /** @param candidate the NFKC-normalised, lower-cased password */
  abstract isCommon(candidate: string): boolean;
}
