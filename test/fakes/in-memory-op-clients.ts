import { createHash, randomBytes } from 'node:crypto';
import { OpClient, OpClients } from '../../src/application/ports/op-clients';

/** The stored form of a client secret (OpClient.clientSecretHash). */
export function clientSecretHash(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('base64url')}`;
}

/**
 * Clients kept in memory, registered with `register` with any client id and metadata a test
 * chooses, without the admin API's rules (which test/e2e/admin-clients.e2e-spec.ts covers).
 */
export class InMemoryOpClients extends OpClients {
  private readonly clients = new Map<string, OpClient>();

  async find(realmId: string, clientId: string): Promise<OpClient | null> {
    const client = this.clients.get(`${realmId}\n${clientId}`);
    return client ? structuredClone(client) : null;
  }

  register(realmId: string, client: OpClient): void {
    this.clients.set(`${realmId}\n${client.clientId}`, structuredClone(client));
  }

  remove(realmId: string, clientId: string): void {
    this.clients.delete(`${realmId}\n${clientId}`);
  }
}

/** Where test clients send browsers back to. */
export const TEST_REDIRECT = 'https://app.example.test/callback';

/** A public third-party client with a fresh id, the usual scopes and `TEST_REDIRECT`; `overrides` change it. */
export function aClient(overrides: Partial<OpClient> = {}): OpClient {
  return {
    clientId: `client-${randomBytes(8).toString('hex')}`,
    name: 'Test App',
    clientSecretHash: null,
    redirectUris: [TEST_REDIRECT],
    postLogoutRedirectUris: [],
    grantTypes: ['authorization_code', 'refresh_token'],
    tokenEndpointAuthMethod: 'none',
    jwksUri: null,
    scopes: ['openid', 'profile', 'email', 'offline_access', 'roles'],
    idTokenSignedResponseAlg: 'RS256',
    backchannelLogoutUri: null,
    firstParty: false,
    accessTokenTtlSeconds: null,
    resources: [],
    ...overrides,
  };
}
