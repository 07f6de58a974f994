import { AuditEventType } from '../../domain/audit/audit-event';
import { Client } from '../../domain/client/client';
import { Resource } from '../../domain/client/resource';
import { DomainError } from '../../domain/errors';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { ClientRepository } from '../ports/client.repository';
import { ResourceRepository } from '../ports/resource.repository';

/**
 * The realm's client `clientId`.
 * @throws DomainError CLIENT_NOT_FOUND for an unknown id or one of another realm
 */
export async function findClient(clients: ClientRepository, realmId: string, clientId: string): Promise<Client> {
  const client = await clients.findById(realmId, clientId);
  if (!client) throw new DomainError('CLIENT_NOT_FOUND', 'Client not found');
  return client;
}

/**
 * The realm's resource `id`.
 * @throws DomainError RESOURCE_NOT_FOUND for an unknown id or one of another realm
 */
export async function findResource(resources: ResourceRepository, realmId: string, id: string): Promise<Resource> {
  const resource = await resources.findById(realmId, id);
  if (!resource) throw new DomainError('RESOURCE_NOT_FOUND', 'Resource not found');
  return resource;
}

/** The realm's resources among the identifiers a client names. */
export function namedResources(resources: ResourceRepository, realmId: string, identifiers: readonly string[]): Promise<Resource[]> {
  return identifiers.length > 0 ? resources.findByIdentifiers(realmId, identifiers) : Promise.resolve([]);
}

/**
 * After a resource was deleted or lost scopes: each client naming it keeps only the resources
 * that exist and the scopes they (and the OpenID scopes) still offer. Returns how many changed.
 */
export async function reconcileClients(
  clients: ClientRepository,
  resources: ResourceRepository,
  realmId: string,
  identifier: string,
  now: Date,
): Promise<number> {
  let changed = 0;
  for (const client of await clients.listNamingResource(realmId, identifier)) {
    if (client.reconcileResources(await namedResources(resources, realmId, client.resources), now)) {
      await clients.save(client);
      changed += 1;
    }
  }
  return changed;
}

/** Audits a change to a client or a resource (never a secret). */
export function auditClientChange(
  audit: AuditLog,
  type: Extract<AuditEventType, `client.${string}` | `resource.${string}`>,
  actor: AdminActor | null,
  realmId: string,
  at: Date,
  details: Record<string, unknown>,
): Promise<void> {
  return audit.record({ type, realmId, actorId: actor?.id ?? null, ip: actor?.ip ?? null, at, details });
}
