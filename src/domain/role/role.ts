import { DomainError } from '../errors';
import { MASTER_REALM } from '../realm/master-realm';
import { assertRoleName, REALM_ADMIN, SUPER_ADMIN } from './role-names';

const BUILT_IN_DESCRIPTIONS: Record<string, string> = {
  [REALM_ADMIN]: 'Administers this realm',
  [SUPER_ADMIN]: 'Administers every realm',
};

const MAX_DESCRIPTION = 200;

export interface RoleState {
  realmId: string;
  name: string;
  description: string | null;
  builtIn: boolean;
  createdAt: Date;
}

/** Whether `name` is one of the service's own roles, which no realm defines or deletes. */
export function isBuiltInRole(name: string): boolean {
  return name === REALM_ADMIN || name === SUPER_ADMIN;
}

/** The built-in roles a realm has: realm-admin everywhere, super-admin in master. */
export function builtInRoleNames(realmId: string): string[] {
  return realmId === MASTER_REALM ? [REALM_ADMIN, SUPER_ADMIN] : [REALM_ADMIN];
}

/**
 * A role of a realm: one of the built-ins, or one its administrators defined. Users hold roles by
 * name and access tokens carry the names, so a backend authorises from the token alone.
 */
export class Role {
  private constructor(private readonly state: RoleState) {}

  /**
   * A role the realm's administrators define.
   * @throws DomainError VALIDATION_FAILED for a malformed name or description | ROLE_EXISTS for a built-in name
   */
  static define(input: { realmId: string; name: string; description?: string | null; now: Date }): Role {
    assertRoleName(input.name);
    if (isBuiltInRole(input.name)) throw new DomainError('ROLE_EXISTS', `"${input.name}" is a built-in role`);
    return new Role({
      realmId: input.realmId,
      name: input.name,
      description: acceptableDescription(input.description),
      builtIn: false,
      createdAt: input.now,
    });
  }

  /** The built-in roles of a realm, dated as the realm. */
  static builtIns(realm: { id: string; createdAt: Date }): Role[] {
    return builtInRoleNames(realm.id).map(
      (name) => new Role({ realmId: realm.id, name, description: BUILT_IN_DESCRIPTIONS[name], builtIn: true, createdAt: realm.createdAt }),
    );
  }

  static restore(state: RoleState): Role {
    return new Role({ ...state });
  }

  get realmId(): string {
    return this.state.realmId;
  }
  get name(): string {
    return this.state.name;
  }
  get description(): string | null {
    return this.state.description;
  }
  get builtIn(): boolean {
    return this.state.builtIn;
  }
  get createdAt(): Date {
    return this.state.createdAt;
  }
}

function acceptableDescription(description: string | null | undefined): string | null {
  if (description === undefined || description === null) return null;
  const trimmed = description.trim();
  if (trimmed.length > MAX_DESCRIPTION) throw DomainError.validation('description', `must be at most ${MAX_DESCRIPTION} characters`);
  if (/\p{Cc}/u.test(trimmed)) throw DomainError.validation('description', 'must not contain control characters');
  return trimmed || null;
}
