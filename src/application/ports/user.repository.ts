import { SessionLifetime } from '../../domain/session/session';
import { LockoutPolicy, User, UserStatus, UserSummary } from '../../domain/user/user';

export interface FailedLoginOutcome {
  failures: number;
  /** True when this failure locked the account. */
  lockedNow: boolean;
}

/**
 * A sign-in's writes were refused because the account can no longer sign in: it was locked or
 * suspended after its password was read and while it was being checked. Nothing was stored.
 */
export class SignInRefusedError extends Error {
  constructor() {
    super('The account can no longer sign in');
  }
}

export type UserSort = 'createdAt' | '-createdAt' | 'email' | '-email' | 'lastLoginAt' | '-lastLoginAt';

export interface UserQuery {
  realmId: string;
  page: number;
  limit: number;
  search?: string;
  status?: UserStatus;
  emailVerified?: boolean;
  sort: UserSort;
  now: Date;
}

export abstract class UserRepository {
  abstract findById(realmId: string, id: string): Promise<User | null>;
  /**
   * The user, provided `sessionId` is one of their sessions and live at `now` (neither revoked,
   * expired, nor past the realm's `lifetime`, as `Session.isLive`); null otherwise. One round trip: it runs
   * for every request that carries an access token.
   */
  abstract findWithLiveSession(
    realmId: string,
    userId: string,
    sessionId: string,
    now: Date,
    lifetime: SessionLifetime,
  ): Promise<User | null>;
  /**
   * The user with its row locked until the surrounding transaction ends: call it inside
   * `Transaction.run` to read, change and `save` a user without losing a concurrent update
   * (an admin's suspension and the user's own password change, say).
   */
  abstract findByIdForUpdate(realmId: string, id: string): Promise<User | null>;
  /** @param email already normalised */
  abstract findByEmail(realmId: string, email: string): Promise<User | null>;
  /** @throws DomainError EMAIL_ALREADY_REGISTERED on a duplicate (realm, email) */
  abstract insert(user: User): Promise<void>;
  /** Writes every mutable field of the user. */
  abstract save(user: User): Promise<void>;
  /**
   * Counts one wrong password atomically (parallel failures never slip past the limit) and
   * locks the account on the `maxFailures`-th, exactly as `User.recordFailedLogin` does.
   * A suspended or already locked account is left as it is (returns null).
   */
  abstract recordFailedLogin(realmId: string, userId: string, policy: LockoutPolicy, now: Date): Promise<FailedLoginOutcome | null>;
  /**
   * Stamps `lastLoginAt` and resets the failure counter, lifting a lock whose time has passed, as
   * `User.recordSuccessfulLogin` does — only while the account may still sign in. Locked or
   * suspended while its password was being checked, it changes nothing, and the batch or
   * transaction it is part of fails with `SignInRefusedError`: no session is stored. Batchable
   * (`Transaction.batch`). With `provenPasswordHash`, also only while that is still the account's
   * password hash: a password cleared (an account takeover) or changed while it was being checked
   * refuses the sign-in the same way.
   */
  abstract recordSuccessfulLogin(realmId: string, userId: string, now: Date, provenPasswordHash?: string): Promise<void>;
  /** Removes the user with its sessions, credentials and tokens; false when absent. */
  abstract delete(realmId: string, id: string): Promise<boolean>;
  abstract list(query: UserQuery): Promise<{ users: UserSummary[]; total: number }>;
  /** Whether any user of the realm holds the role. */
  abstract existsWithRole(realmId: string, role: string): Promise<boolean>;
  /** The ids of the realm's users holding the role (meant for the few administrators, not for common roles). */
  abstract idsWithRole(realmId: string, role: string): Promise<string[]>;
}
