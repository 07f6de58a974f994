import { Resource } from '../../domain/client/resource';

/** The realm's API resources. */
export abstract class ResourceRepository {
  /** The realm's resource with that id; null for an unknown id or one of another realm. */
  abstract findById(realmId: string, id: string): Promise<Resource | null>;
  /** The realm's resources among `identifiers` (unknown ones are left out). */
  abstract findByIdentifiers(realmId: string, identifiers: readonly string[]): Promise<Resource[]>;
  /** The realm's resources, oldest first. */
  abstract list(realmId: string): Promise<Resource[]>;
  /** @throws DomainError RESOURCE_EXISTS for an identifier the realm has */
  abstract insert(resource: Resource): Promise<void>;
  /** Writes the name, the scopes, the token lifetime and the update time. */
  abstract save(resource: Resource): Promise<void>;
  /** Removes the resource; false when the realm has no such resource. */
  abstract delete(realmId: string, id: string): Promise<boolean>;
}
