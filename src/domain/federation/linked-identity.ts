/** An account at an identity provider, linked to a user: found by (provider, subject), never by email. */
export interface LinkedIdentity {
  id: string;
  realmId: string;
  userId: string;
  providerId: string;
  /** The provider's alias in the realm. */
  provider: string;
  /** The provider's `sub` for the account. */
  subject: string;
  /** The address the provider gave at the last sign-in, or null. */
  email: string | null;
  linkedAt: Date;
  lastUsedAt: Date | null;
}
