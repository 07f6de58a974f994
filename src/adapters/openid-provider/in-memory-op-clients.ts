import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { OpClient, OpClients } from '../../application/ports/op-clients';

/** The stored form of a client secret (OpClient.clientSecretHash). */
export function clientSecretHash(secret: string): string {
  return `sha256:${createHash('sha256').update(secret, 'utf8').digest('base64url')}`;
}

/**
 * Clients kept in memory, registered with `register`: what the provider reads until the realm's
 * clients have a table of their own.
 */
@Injectable()
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
