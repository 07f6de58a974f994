import { DomainError } from '../errors';

/** The ways an account can sign in on its own: a password, linked identities, passkeys. */
export interface WaysIn {
  hasPassword: boolean;
  identities: number;
  passkeys: number;
}

/**
 * An account must keep a way to sign in: removing its last identity or passkey when nothing else
 * is left is refused. (An email code is not counted: it proves the address, and a realm may turn
 * registration and codes off; an account's own credentials must stand on their own.)
 * @throws DomainError INVALID_USER_STATE when `removing` is the last way in
 */
export function assertWayInRemains(ways: WaysIn, removing: 'identity' | 'passkey'): void {
  const after = {
    ...ways,
    identities: ways.identities - (removing === 'identity' ? 1 : 0),
    passkeys: ways.passkeys - (removing === 'passkey' ? 1 : 0),
  };
  if (after.hasPassword || after.identities > 0 || after.passkeys > 0) return;
  throw new DomainError(
    'INVALID_USER_STATE',
    `This ${removing === 'passkey' ? 'passkey' : 'linked account'} is the last way to sign in to this account: set a password or add another way first`,
  );
}
