/** What an identity provider said about the account that signed in. */
export interface ProviderAccount {
  /** The provider's `sub`: with the provider, the only key of an identity. */
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

/** The user of the realm with the provider's address, as the rules need to see it. */
export interface AccountWithEmail {
  id: string;
  emailVerified: boolean;
  isAdministrator: boolean;
}

/** Why a federated sign-in is refused: the `error` the app's return page receives. */
export type FederationRefusal = 'email_required' | 'email_already_registered' | 'registration_disabled' | 'identity_in_use';

export type AccountDecision =
  /** The identity is linked already: that user. */
  | { kind: 'sign-in'; userId: string }
  /** Both sides proved the address: link the identity to that user. */
  | { kind: 'link'; userId: string }
  /** Nobody ever proved the local account's address: the provider's proof claims it. */
  | { kind: 'take-over'; userId: string }
  /** Nobody has the address: a new user, verified only when the provider vouches for it. */
  | { kind: 'register'; emailVerified: boolean }
  | { kind: 'refuse'; reason: FederationRefusal };

/**
 * Which account a federated sign-in lands on. Identities are found by (provider, subject), never
 * by email; an address decides only when the provider vouches for it (`email_verified` and a
 * provider trusted to say so), and then only for an account that is not an administrator's.
 * A verified local account is linked; an unverified one is taken over (the caller removes what a
 * squatter could have added); otherwise the owner must sign in and link from the account.
 */
export function decideAccount(input: {
  /** The user the (provider, subject) is linked to, or null. */
  linkedUserId: string | null;
  account: ProviderAccount;
  /** The provider's `trustEmailVerified`. */
  trustEmailVerified: boolean;
  /** The realm's user with the provider's address (null without an address). */
  userWithEmail: AccountWithEmail | null;
  registrationOpen: boolean;
}): AccountDecision {
  if (input.linkedUserId) return { kind: 'sign-in', userId: input.linkedUserId };
  if (!input.account.email) return { kind: 'refuse', reason: 'email_required' };
  const vouched = input.account.emailVerified && input.trustEmailVerified;
  const existing = input.userWithEmail;
  if (existing) {
    if (!vouched || existing.isAdministrator) return { kind: 'refuse', reason: 'email_already_registered' };
    return existing.emailVerified ? { kind: 'link', userId: existing.id } : { kind: 'take-over', userId: existing.id };
  }
  if (!input.registrationOpen) return { kind: 'refuse', reason: 'registration_disabled' };
  return { kind: 'register', emailVerified: vouched };
}

export type LinkDecision = { kind: 'link' } | { kind: 'linked-already' } | { kind: 'refuse'; reason: 'identity_in_use' };

/**
 * A signed-in user links an identity to their own account: allowed unless the identity belongs
 * to someone else. The address plays no part: the user proved both accounts just now.
 */
export function decideLink(input: { linkedUserId: string | null; callerId: string }): LinkDecision {
  if (!input.linkedUserId) return { kind: 'link' };
  return input.linkedUserId === input.callerId ? { kind: 'linked-already' } : { kind: 'refuse', reason: 'identity_in_use' };
}
