import { Client } from '../../domain/client/client';

/** The realm's clients, read by the admin API and by the realm's OpenID provider. */
export abstract class ClientRepository {
  /**
   * Inside a transaction, waits until no other transaction writes the realm's clients or
   * resources, and keeps them from doing so until it ends. Every write of a client or a resource
   * takes it first, so a client never names a resource being deleted, and no two writes deadlock.
   */
  abstract lockRealm(realmId: string): Promise<void>;
  /** The realm's client with that id; null for an unknown id or one of another realm. */
  abstract findById(realmId: string, clientId: string): Promise<Client | null>;
  /** The realm's clients, oldest first. */
  abstract list(realmId: string): Promise<Client[]>;
  /** The realm's clients naming the resource `identifier`. */
  abstract listNamingResource(realmId: string, identifier: string): Promise<Client[]>;
  abstract insert(client: Client): Promise<void>;
  /** Writes every field but the id, the realm, the type and the creation time. */
  abstract save(client: Client): Promise<void>;
  /** Removes the client; false when the realm has no such client. */
  abstract delete(realmId: string, clientId: string): Promise<boolean>;
}
