import { DomainError } from '../../domain/errors';
import { IdentityProvider } from '../../domain/federation/identity-provider';
import { AdminActor } from '../admin/admin-actor';
import { AuditLog } from '../ports/audit-log';
import { IdentityProviderRepository } from '../ports/identity-provider.repository';

/**
 * The realm's provider with that alias.
 * @throws DomainError IDENTITY_PROVIDER_NOT_FOUND
 */
export async function findProvider(providers: IdentityProviderRepository, realmId: string, alias: string): Promise<IdentityProvider> {
  const provider = await providers.findByAlias(realmId, alias);
  if (!provider) throw new DomainError('IDENTITY_PROVIDER_NOT_FOUND', 'Identity provider not found');
  return provider;
}

/** Audits an administrator's change to a provider (never its secret). */
export function auditProviderChange(
  audit: AuditLog,
  type: 'identity_provider.created' | 'identity_provider.updated' | 'identity_provider.deleted',
  actor: AdminActor,
  realmId: string,
  at: Date,
  details: Record<string, unknown>,
): Promise<void> {
  return audit.record({ type, realmId, actorId: actor.id, ip: actor.ip, at, details });
}
