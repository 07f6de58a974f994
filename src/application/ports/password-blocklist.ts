/** Common and breached passwords (contract §3.1). */
export abstract class PasswordBlocklist {
  /** @param candidate the NFKC-normalised, lower-cased password */
  abstract isCommon(candidate: string): boolean;
}
