import { User, UserState } from '../../src/domain/user/user';

export function aUser(overrides: Partial<UserState> = {}): User {
  const now = new Date('2026-11-01T00:00:00.000Z');
  return User.restore({
    id: crypto.randomUUID(),
    realmId: 'default',
    email: `user-${Math.random().toString(36).slice(2)}@example.com`,
    emailVerified: false,
    passwordHash: 'hashed:correct horse battery staple',
    profile: { firstName: 'Test', lastName: 'User', avatar: null },
    status: 'active',
    lockedUntil: null,
    failedLoginCount: 0,
    roles: [],
    appMetadata: {},
    mfaMethods: [],
    createdAt: now,
    updatedAt: now,
    lastLoginAt: null,
    ...overrides,
  });
}
