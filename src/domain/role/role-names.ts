import { DomainError } from '../errors';

/** Administers every realm, and the realms themselves; exists only in `master`. */
export const SUPER_ADMIN = 'super-admin';
/** Administers its own realm. */
export const REALM_ADMIN = 'realm-admin';

/** Role names as users hold them and tokens carry them: `teacher`, `billing:read`, `org.admin`. */
export const ROLE_NAME = /^[a-z][a-z0-9:._-]{0,63}$/;

/**
 * @throws DomainError VALIDATION_FAILED unless the name matches {@link ROLE_NAME}
 */
export function assertRoleName(name: string, field = 'name'): void {
  if (!ROLE_NAME.test(name)) throw DomainError.validation(field, `"${name}" is not a valid role name (^[a-z][a-z0-9:._-]{0,63}$)`);
}
