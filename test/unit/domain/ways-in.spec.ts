import { assertWayInRemains } from '../../../src/domain/user/ways-in';

describe('assertWayInRemains', () => {
  it('refuses to remove the last passkey of an account without a password or identity', () => {
    expect(() => assertWayInRemains({ hasPassword: false, identities: 0, passkeys: 1 }, 'passkey')).toThrow(
      expect.objectContaining({ code: 'INVALID_USER_STATE' }),
    );
  });

  it('refuses to remove the last identity of an account without a password or passkey', () => {
    expect(() => assertWayInRemains({ hasPassword: false, identities: 1, passkeys: 0 }, 'identity')).toThrow(
      expect.objectContaining({ code: 'INVALID_USER_STATE' }),
    );
  });

  it('allows the removal while a password, another passkey or an identity remains', () => {
    expect(() => assertWayInRemains({ hasPassword: true, identities: 0, passkeys: 1 }, 'passkey')).not.toThrow();
    expect(() => assertWayInRemains({ hasPassword: false, identities: 0, passkeys: 2 }, 'passkey')).not.toThrow();
    expect(() => assertWayInRemains({ hasPassword: false, identities: 1, passkeys: 1 }, 'passkey')).not.toThrow();
    expect(() => assertWayInRemains({ hasPassword: false, identities: 2, passkeys: 0 }, 'identity')).not.toThrow();
  });
});
