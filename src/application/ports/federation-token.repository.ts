export type FederationTokenKind = 'state' | 'login_code' | 'link_code';

/** A short-lived token of a federated sign-in, stored under its hash only. */
export interface FederationToken {
  tokenHash: string;
  kind: FederationTokenKind;
  realmId: string;
  providerId: string;
  payload: Record<string, unknown>;
  createdAt: Date;
  expiresAt: Date;
}

export abstract class FederationTokenRepository {
  abstract insert(token: FederationToken): Promise<void>;
  /**
   * Uses the token up if it is unused and unexpired and returns it; null otherwise (unknown,
   * used, expired or another kind). Exactly one concurrent caller gets it.
   */
  abstract consume(tokenHash: string, kind: FederationTokenKind, now: Date): Promise<FederationToken | null>;
}
