/**
 * What the realm's OpenID provider issued to a client: its grants (consents, codes, refresh and
 * access tokens, device codes), keyed by the client's id. Deleting a client ends them in the
 * deletion's transaction. The clients module binds a no-op until the OpenID provider's module
 * binds its own adapter here instead.
 */
export abstract class ClientGrants {
  /** Ends every grant and token of the client, inside the caller's transaction. */
  abstract endAllForClient(realmId: string, clientId: string, now: Date): Promise<void>;
}
