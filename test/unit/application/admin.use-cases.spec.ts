import { AdminActor } from '../../../src/application/admin/admin-actor';
import { adminGrant, AuthorizeAdminUseCase } from '../../../src/application/admin/authorize-admin.use-case';
import { SetUserRolesUseCase } from '../../../src/application/admin/set-user-roles.use-case';
import { SuspendUserUseCase } from '../../../src/application/admin/suspend-user.use-case';
import { VerifiedAccessToken } from '../../../src/application/ports/access-tokens';
import { AppConfig } from '../../../src/config/app-config';
import { Session } from '../../../src/domain/session/session';
import { aUser } from '../../builders/user.builder';
import { InMemorySessionRepository } from '../../fakes/in-memory-session.repository';
import { InMemoryUserRepository } from '../../fakes/in-memory-user.repository';
import { FixedClock, immediateTransaction, InMemoryAuditLog } from '../../fakes/simple-fakes';

function token(overrides: Partial<VerifiedAccessToken>): VerifiedAccessToken {
  return { sub: 'u1', realm: 'default', sid: 's1', roles: [], amr: ['pwd'], jti: 'j', iat: 0, exp: 0, ...overrides };
}

function config(adminRequireMfa = false): AppConfig {
  const c = new AppConfig();
  c.adminRequireMfa = adminRequireMfa;
  return c;
}

describe('adminGrant: who administers which realm', () => {
  it.each([
    ['realm-admin of the realm', 'default', ['realm-admin'], 'default', false, 'realm-admin'],
    ['realm-admin of another realm', 'acme', ['realm-admin'], 'default', false, null],
    ['realm-admin of master on another realm', 'master', ['realm-admin'], 'default', false, null],
    ['super-admin of master on any realm', 'master', ['super-admin'], 'acme', false, 'super-admin'],
    ['super-admin role outside master', 'default', ['super-admin'], 'default', false, null],
    ['a user without roles', 'default', [], 'default', false, null],
    ['an unrelated role', 'default', ['auditor'], 'default', false, null],
    ['realm-admin on a super-admin-only route', 'master', ['realm-admin'], 'master', true, null],
    ['super-admin on a super-admin-only route', 'master', ['super-admin'], 'master', true, 'super-admin'],
  ] as const)('%s', (_who, callerRealm, roles, target, superOnly, expected) => {
    expect(adminGrant(callerRealm, roles, target, superOnly)).toBe(expected);
  });
});

describe('AuthorizeAdminUseCase', () => {
  const clock = new FixedClock();

  it('admits a realm-admin whose stored roles still grant it, naming the account as actor', async () => {
    const admin = aUser({ roles: ['realm-admin'] });
    const authorize = new AuthorizeAdminUseCase(new InMemoryUserRepository([admin]), clock, config());
    const actor = await authorize.execute({
      principal: token({ sub: admin.id, roles: ['realm-admin'] }),
      realmId: 'default',
      superAdminOnly: false,
      ip: '10.0.0.1',
    });
    expect(actor).toEqual({ id: admin.id, realmId: 'default', superAdmin: false, ip: '10.0.0.1' });
  });

  it.each([
    ['the role was removed since the token was issued', { roles: [] }],
    ['the account was suspended', { roles: ['realm-admin'], status: 'suspended' as const }],
    ['the account is locked', { roles: ['realm-admin'], status: 'locked' as const, lockedUntil: null }],
  ])('refuses with FORBIDDEN when %s', async (_why, state) => {
    const admin = aUser(state);
    const authorize = new AuthorizeAdminUseCase(new InMemoryUserRepository([admin]), clock, config());
    await expect(
      authorize.execute({
        principal: token({ sub: admin.id, roles: ['realm-admin'] }),
        realmId: 'default',
        superAdminOnly: false,
        ip: null,
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('decides on the account read with the session check when given one, without reading it again', async () => {
    const admin = aUser({ roles: ['realm-admin'] });
    const users = new InMemoryUserRepository([admin]);
    const findById = jest.spyOn(users, 'findById');
    const authorize = new AuthorizeAdminUseCase(users, clock, config());
    const input = (account: typeof admin) => ({
      principal: token({ sub: admin.id, roles: ['realm-admin'] }),
      account,
      realmId: 'default',
      superAdminOnly: false,
      ip: null,
    });
    await expect(authorize.execute(input(admin))).resolves.toMatchObject({ id: admin.id, superAdmin: false });
    // The account as read moments ago has lost the role: refused, whatever the token says.
    await expect(authorize.execute(input(aUser({ id: admin.id, roles: [] })))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(findById).not.toHaveBeenCalled();
    // Another account than the token's is not taken for it: the token's own is read.
    await expect(authorize.execute(input(aUser({ roles: ['realm-admin'] })))).resolves.toMatchObject({ id: admin.id });
    expect(findById).toHaveBeenCalledTimes(1);
  });

  it('does not let a stored role the token lacks widen the token', async () => {
    const admin = aUser({ realmId: 'master', roles: ['super-admin'] });
    const authorize = new AuthorizeAdminUseCase(new InMemoryUserRepository([admin]), clock, config());
    await expect(
      authorize.execute({
        principal: token({ sub: admin.id, realm: 'master', roles: [] }),
        realmId: 'master',
        superAdminOnly: false,
        ip: null,
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('with ADMIN_REQUIRE_MFA refuses a password-only token and admits otp or hwk', async () => {
    const admin = aUser({ realmId: 'master', roles: ['super-admin'] });
    const authorize = new AuthorizeAdminUseCase(new InMemoryUserRepository([admin]), clock, config(true));
    const input = (amr: string[]) => ({
      principal: token({ sub: admin.id, realm: 'master', roles: ['super-admin'], amr }),
      realmId: 'acme',
      superAdminOnly: false,
      ip: null,
    });
    await expect(authorize.execute(input(['pwd']))).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringMatching(/requires MFA/),
    });
    await expect(authorize.execute(input(['pwd', 'otp']))).resolves.toMatchObject({ superAdmin: true, realmId: 'master' });
    await expect(authorize.execute(input(['pwd', 'hwk']))).resolves.toMatchObject({ superAdmin: true });
  });
});

describe('admin use cases with fakes', () => {
  const clock = new FixedClock();
  const realmAdmin: AdminActor = { id: 'a1', realmId: 'master', superAdmin: false, ip: null };
  const superAdmin: AdminActor = { id: 'root', realmId: 'master', superAdmin: true, ip: null };

  function openSession(userId: string, realmId = 'default'): Session {
    return Session.open({
      id: crypto.randomUUID(),
      realmId,
      userId,
      device: { id: 'd', name: 'n', type: 'browser', fingerprint: null },
      referenceFingerprint: {},
      ip: '127.0.0.1',
      location: { country: null, city: null },
      userAgent: null,
      amr: ['pwd'],
      now: clock.now(),
      lifetime: { idleTimeoutSeconds: 3600, maxLifetimeSeconds: 7200 },
    });
  }

  it('suspends: status suspended, every live session revoked, one audit event naming the admin', async () => {
    const user = aUser();
    const users = new InMemoryUserRepository([user]);
    const sessions = new InMemorySessionRepository();
    await sessions.insert(openSession(user.id));
    await sessions.insert(openSession(user.id));
    const audit = new InMemoryAuditLog();
    const suspend = new SuspendUserUseCase(users, sessions, audit, immediateTransaction, clock);
    const result = await suspend.execute({
      actor: { ...realmAdmin, realmId: 'default' },
      realmId: 'default',
      userId: user.id,
      reason: 'spam',
    });
    expect(result.statusAt(clock.now())).toBe('suspended');
    expect([...sessions.rows.values()].every((s) => s.revokedAt)).toBe(true);
    expect(audit.entries).toEqual([
      expect.objectContaining({ type: 'user.suspended', actorId: 'a1', userId: user.id, details: { reason: 'spam', revokedSessions: 2 } }),
    ]);
    await expect(suspend.execute({ actor: realmAdmin, realmId: 'default', userId: user.id })).rejects.toMatchObject({
      code: 'INVALID_USER_STATE',
      message: expect.stringMatching(/suspended/),
    });
  });

  it('refuses to suspend a super-admin unless the actor is one', async () => {
    const root = aUser({ realmId: 'master', roles: ['super-admin'] });
    const users = new InMemoryUserRepository([root]);
    const suspend = new SuspendUserUseCase(users, new InMemorySessionRepository(), new InMemoryAuditLog(), immediateTransaction, clock);
    await expect(suspend.execute({ actor: realmAdmin, realmId: 'master', userId: root.id })).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(suspend.execute({ actor: superAdmin, realmId: 'master', userId: root.id })).resolves.toBeDefined();
  });

  it('answers USER_NOT_FOUND for a user of another realm', async () => {
    const user = aUser({ realmId: 'acme' });
    const suspend = new SuspendUserUseCase(
      new InMemoryUserRepository([user]),
      new InMemorySessionRepository(),
      new InMemoryAuditLog(),
      immediateTransaction,
      clock,
    );
    await expect(suspend.execute({ actor: realmAdmin, realmId: 'default', userId: user.id })).rejects.toMatchObject({
      code: 'USER_NOT_FOUND',
    });
  });

  it('sets roles, but only a super-admin grants or removes super-admin, and only in master', async () => {
    const member = aUser({ realmId: 'master' });
    const users = new InMemoryUserRepository([member]);
    const audit = new InMemoryAuditLog();
    const setRoles = new SetUserRolesUseCase(users, audit, immediateTransaction, clock);
    await expect(
      setRoles.execute({ actor: realmAdmin, realmId: 'master', userId: member.id, roles: ['super-admin'] }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await setRoles.execute({ actor: superAdmin, realmId: 'master', userId: member.id, roles: ['super-admin'] });
    await expect(setRoles.execute({ actor: realmAdmin, realmId: 'master', userId: member.id, roles: [] })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    await expect(
      setRoles.execute({ actor: realmAdmin, realmId: 'master', userId: member.id, roles: ['super-admin', 'auditor'] }),
    ).resolves.toBeDefined();
    expect((await users.findById('master', member.id))!.roles).toEqual(['super-admin', 'auditor']);
    const elsewhere = aUser();
    await users.insert(elsewhere);
    await expect(
      setRoles.execute({ actor: superAdmin, realmId: 'default', userId: elsewhere.id, roles: ['super-admin'] }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(audit.types()).toEqual(['user.roles_changed', 'user.roles_changed']);
  });
});
