import { splitName, statusAt, User } from '../../../src/domain/user/user';
import { aUser } from '../../builders/user.builder';

const now = new Date('2026-11-25T12:00:00.000Z');
const policy = { maxFailures: 3, durationSeconds: 900 };

describe('User', () => {
  it('registers with a normalised email, split name, no roles and status active', () => {
    const user = User.register({
      id: 'u1',
      realmId: 'default',
      email: '  Ada@Example.COM ',
      name: 'Ada  Lovelace',
      passwordHash: 'h',
      now,
    });
    expect(user.email).toBe('ada@example.com');
    expect(user.profile).toEqual({ firstName: 'Ada', lastName: 'Lovelace', avatar: null });
    expect(user.roles).toEqual([]);
    expect(user.statusAt(now)).toBe('active');
    expect(user.emailVerified).toBe(false);
  });

  it('is an administrator with realm-admin or super-admin, and a super-admin only in master', () => {
    expect([aUser().isAdministrator(), aUser({ roles: ['auditor'] }).isAdministrator()]).toEqual([false, false]);
    expect(aUser({ roles: ['realm-admin'] }).isAdministrator()).toBe(true);
    expect(aUser({ realmId: 'master', roles: ['super-admin'] }).isAdministrator()).toBe(true);
    expect(aUser({ realmId: 'master', roles: ['super-admin'] }).isSuperAdmin()).toBe(true);
    expect(aUser({ realmId: 'master', roles: ['realm-admin'] }).isSuperAdmin()).toBe(false);
    expect(aUser({ realmId: 'acme', roles: ['super-admin'] }).isSuperAdmin()).toBe(false);
  });

  it('splits a single-word name into a first name and an empty last name', () => {
    expect(splitName('Plato')).toEqual({ firstName: 'Plato', lastName: '' });
  });

  it.each(['', '   ', 'x'.repeat(101), 'line\nbreak'])('refuses the name %j', (name) => {
    expect(() => splitName(name)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });

  it('counts a name in code points: 100 emoji are a name, 101 are not, at registration and in a profile change', () => {
    const emoji = (n: number) => '🦉'.repeat(n);
    expect(splitName(emoji(100))).toEqual({ firstName: emoji(100), lastName: '' });
    expect(() => splitName(emoji(101))).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    const user = aUser();
    expect(user.updateProfile({ firstName: emoji(100), lastName: emoji(100) }, now)).toEqual(['firstName', 'lastName']);
    expect(() => user.updateProfile({ firstName: emoji(101) }, now)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });

  it('locks the account at the configured number of consecutive wrong passwords', () => {
    const user = aUser();
    user.recordFailedLogin(now, policy);
    user.recordFailedLogin(now, policy);
    expect(user.statusAt(now)).toBe('active');
    user.recordFailedLogin(now, policy);
    expect(user.statusAt(now)).toBe('locked');
    expect(user.lockRemainingSeconds(now)).toBe(900);
  });

  it('lifts a temporary lock by itself when its time has passed', () => {
    const user = aUser({ status: 'locked', lockedUntil: new Date(now.getTime() + 1000), failedLoginCount: 3 });
    expect(user.statusAt(now)).toBe('locked');
    expect(user.statusAt(new Date(now.getTime() + 1000))).toBe('active');
  });

  it('keeps a lock with duration 0 until an administrator unlocks', () => {
    const user = aUser();
    for (let i = 0; i < 3; i++) user.recordFailedLogin(now, { maxFailures: 3, durationSeconds: 0 });
    expect(user.statusAt(new Date(now.getTime() + 10 * 365 * 86400 * 1000))).toBe('locked');
    expect(user.lockRemainingSeconds(now)).toBeNull();
    user.unlock(now);
    expect(user.statusAt(now)).toBe('active');
    expect(user.failedLoginCount).toBe(0);
  });

  it('starts counting from zero after an expired lock', () => {
    const user = aUser({ status: 'locked', lockedUntil: now, failedLoginCount: 3 });
    user.recordFailedLogin(now, policy);
    expect(user.failedLoginCount).toBe(1);
    expect(user.statusAt(now)).toBe('active');
  });

  it('resets the failure counter on a successful login', () => {
    const user = aUser({ failedLoginCount: 2 });
    user.recordSuccessfulLogin(now);
    expect(user.failedLoginCount).toBe(0);
    expect(user.lastLoginAt).toEqual(now);
  });

  it('refuses a successful login while a lock is in force or the account is suspended, and lifts an expired lock', () => {
    const later = new Date(now.getTime() + 60_000);
    for (const state of [
      { status: 'locked', lockedUntil: null },
      { status: 'locked', lockedUntil: later },
      { status: 'suspended' },
    ] as const) {
      const refused = aUser({ ...state, failedLoginCount: 5 });
      expect(() => refused.recordSuccessfulLogin(now)).toThrow(expect.objectContaining({ code: 'INVALID_USER_STATE' }));
      expect(refused.failedLoginCount).toBe(5);
      expect(refused.lastLoginAt).toBeNull();
    }
    const expired = aUser({ status: 'locked', lockedUntil: now, failedLoginCount: 5 });
    expired.recordSuccessfulLogin(now);
    expect(expired.statusAt(now)).toBe('active');
    expect(expired.failedLoginCount).toBe(0);
  });

  it('suspends active and locked users, and refuses to suspend a suspended one naming its status', () => {
    aUser().suspend(now);
    aUser({ status: 'locked', lockedUntil: null }).suspend(now);
    expect(() => aUser({ status: 'suspended' }).suspend(now)).toThrow(
      expect.objectContaining({ code: 'INVALID_USER_STATE', message: expect.stringContaining('suspended') }),
    );
  });

  it('activates only suspended users and unlocks only locked ones', () => {
    expect(() => aUser().activate(now)).toThrow(expect.objectContaining({ code: 'INVALID_USER_STATE' }));
    expect(() => aUser().unlock(now)).toThrow(expect.objectContaining({ code: 'INVALID_USER_STATE' }));
    const suspended = aUser({ status: 'suspended' });
    suspended.activate(now);
    expect(suspended.statusAt(now)).toBe('active');
  });

  it('refuses malformed role names', () => {
    expect(() => aUser().setRoles(['Realm Admin'], now)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
  it('summarises a user for lists without credentials, as a copy that later changes leave alone', () => {
    const user = aUser({ status: 'locked', lockedUntil: new Date(now.getTime() + 1000), roles: ['auditor'], mfaMethods: ['totp'] });
    const summary = user.summary();
    expect(Object.keys(summary).sort()).toEqual(
      [
        'createdAt',
        'email',
        'emailVerified',
        'hasPassword',
        'id',
        'lastLoginAt',
        'lockedUntil',
        'mfaMethods',
        'profile',
        'roles',
        'appMetadata',
        'status',
      ].sort(),
    );
    expect(summary).toMatchObject({ id: user.id, email: user.email, status: 'locked', roles: ['auditor'], mfaMethods: ['totp'] });
    user.setRoles(['support'], now);
    user.unlock(now);
    expect(summary).toMatchObject({ status: 'locked', roles: ['auditor'] });
    // The same lock-expiry rule as the user itself.
    expect(statusAt(summary, now)).toBe('locked');
    expect(statusAt(summary, new Date(now.getTime() + 1000))).toBe('active');
  });
});

describe('User.takeOver', () => {
  it('removes the password, verifies the email, clears second factors and reports hasPassword false', () => {
    const user = aUser({ emailVerified: false, mfaMethods: ['totp', 'webauthn'], failedLoginCount: 2 });
    expect(user.hasPassword).toBe(true);
    user.takeOver(now);
    expect(user.passwordHash).toBeNull();
    expect(user.hasPassword).toBe(false);
    expect(user.summary().hasPassword).toBe(false);
    expect(user.emailVerified).toBe(true);
    expect(user.mfaMethods).toEqual([]);
    expect(user.failedLoginCount).toBe(0);
  });

  it('lifts a lock the wrong passwords caused: the password it guarded is gone', () => {
    const user = aUser({ status: 'locked', lockedUntil: new Date(now.getTime() + 60_000), failedLoginCount: 3 });
    user.takeOver(now);
    expect(user.statusAt(now)).toBe('active');
    expect(user.lockedUntil).toBeNull();
  });

  it('keeps a suspension', () => {
    const user = aUser({ status: 'suspended' });
    user.takeOver(now);
    expect(user.statusAt(now)).toBe('suspended');
  });

  it('refuses a verified account: it is already somebody’s', () => {
    const user = aUser({ emailVerified: true });
    expect(() => user.takeOver(now)).toThrow(expect.objectContaining({ code: 'INVALID_USER_STATE' }));
    expect(user.hasPassword).toBe(true);
  });

  it.each(['realm-admin', 'super-admin'])('refuses an account holding %s', (role) => {
    const user = aUser({ roles: [role] });
    expect(() => user.takeOver(now)).toThrow(expect.objectContaining({ code: 'INVALID_USER_STATE' }));
    expect(user.hasPassword).toBe(true);
  });
});
