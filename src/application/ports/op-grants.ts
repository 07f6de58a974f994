/** What a user allowed one app (one client of the realm's OpenID provider). */
export interface AppGrant {
  clientId: string;
  /** The scopes granted: OpenID scopes, then resource scopes. */
  scopes: string[];
  grantedAt: Date;
  /** When the app last got a token under the grant, or null. */
  lastUsedAt: Date | null;
}

/** The grants users gave the realm's apps, and what was issued under them. */
export abstract class OpGrants {
  /** The user's grants, one per app (the newest when there are several). */
  abstract listForUser(realmId: string, userId: string): Promise<AppGrant[]>;
  /**
   * Ends the user's grants to `clientId` and every code and token issued under them; false when
   * the user had none.
   */
  abstract revokeForUser(realmId: string, userId: string, clientId: string): Promise<boolean>;
}
