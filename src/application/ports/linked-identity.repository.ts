import { LinkedIdentity } from '../../domain/federation/linked-identity';

/** The (provider, subject) is already linked, to this user or another. Nothing was stored. */
export class IdentityInUseError extends Error {
  constructor() {
    super('This account at the provider is already linked');
  }
}

export abstract class LinkedIdentityRepository {
  /** The identity of `subject` at a provider, with its provider's alias, or null. */
  abstract findBySubject(providerId: string, subject: string): Promise<LinkedIdentity | null>;
  /** A user's identities, oldest link first. */
  abstract listForUser(realmId: string, userId: string): Promise<LinkedIdentity[]>;
  /** The identities of several users at once (a page of a users list), by user id. */
  abstract listForUsers(realmId: string, userIds: readonly string[]): Promise<Map<string, LinkedIdentity[]>>;
  /** @throws IdentityInUseError when the (provider, subject) is already linked */
  abstract insert(identity: LinkedIdentity): Promise<void>;
  /** Records a sign-in with the identity and the address the provider gave this time. */
  abstract recordUse(id: string, email: string | null, now: Date): Promise<void>;
  /** Unlinks one identity of a user; false when the user has no such identity. */
  abstract delete(realmId: string, userId: string, id: string): Promise<boolean>;
  /** Unlinks every identity of a user; returns how many. */
  abstract deleteAllForUser(realmId: string, userId: string): Promise<number>;
  /** Unlinks every identity at a provider; returns how many. */
  abstract deleteAllForProvider(providerId: string): Promise<number>;
}
