import { AdminActor } from '../../../src/application/admin/admin-actor';
import { AuthorizeAdminUseCase } from '../../../src/application/admin/authorize-admin.use-case';
import { SetUserRolesUseCase } from '../../../src/application/admin/set-user-roles.use-case';
import { SuspendUserUseCase } from '../../../src/application/admin/suspend-user.use-case';
import { VerifiedAccessToken } from '../../../src/application/ports/access-tokens';
import { AppConfig } from '../../../src/config/app-config';
import { Session } from '../../../src/domain/session/session';
import { User } from '../../../src/domain/user/user';
import { aUser } from '../../builders/user.builder';
import { InMemoryRoleRepository } from '../../fakes/in-memory-role.repository';
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

const sessionClock = new FixedClock();

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
    now: sessionClock.now(),
    lifetime: { idleTimeoutSeconds: 3600, maxLifetimeSeconds: 7200 },
  });
}

describe('AuthorizeAdminUseCase', () => {
  const clock = new FixedClock();

  function authorizer(users: User[], options: { sessions?: Session[]; mfa?: boolean } = {}) {
    const sessions = new InMemorySessionRepository();
    for (const session of options.sessions ?? []) sessions.rows.set(session.id, session);
    const audit = new InMemoryAuditLog();
    const authorize = new AuthorizeAdminUseCase(new InMemoryUserRepository(users), sessions, audit, clock, config(options.mfa));
    return { authorize, audit };
  }

  it('admits a realm-admin whose stored roles still grant it, naming the account as actor', async () => {
    const admin = aUser({ roles: ['realm-admin'] });
    const { authorize, audit } = authorizer([admin]);
    const actor = await authorize.execute({
      principal: token({ sub: admin.id, roles: ['realm-admin'] }),
      realmId: 'default',
      action: 'users.list',
      ip: '10.0.0.1',
    });
    expect(actor).toEqual({ id: admin.id, realmId: 'default', superAdmin: false, hidesSuperAdmins: false, ip: '10.0.0.1' });
    expect(audit.entries).toEqual([]);
  });

  it.each([
    ['the role was removed since the token was issued', { roles: [] }],
    ['the account was suspended', { roles: ['realm-admin'], status: 'suspended' as const }],
    ['the account is locked', { roles: ['realm-admin'], status: 'locked' as const, lockedUntil: null }],
  ])('refuses with FORBIDDEN when %s, and audits the refusal', async (_why, state) => {
    const admin = aUser(state);
    const { authorize, audit } = authorizer([admin]);
    await expect(
      authorize.execute({
        principal: token({ sub: admin.id, roles: ['realm-admin'] }),
        realmId: 'default',
        action: 'users.list',
        ip: null,
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(audit.entries).toEqual([
      expect.objectContaining({
        type: 'admin.denied',
        realmId: 'default',
        actorId: admin.id,
        details: expect.objectContaining({ action: 'users.list' }),
      }),
    ]);
  });

  it('decides on the account read with the session check when given one, without reading it again', async () => {
    const admin = aUser({ roles: ['realm-admin'] });
    const users = new InMemoryUserRepository([admin]);
    const findById = jest.spyOn(users, 'findById');
    const authorize = new AuthorizeAdminUseCase(users, new InMemorySessionRepository(), new InMemoryAuditLog(), clock, config());
    const input = (account: typeof admin) => ({
      principal: token({ sub: admin.id, roles: ['realm-admin'] }),
      account,
      realmId: 'default',
      action: 'users.list' as const,
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
    const { authorize } = authorizer([admin]);
    await expect(
      authorize.execute({
        principal: token({ sub: admin.id, realm: 'master', roles: [] }),
        realmId: 'master',
        action: 'users.list',
        ip: null,
      }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('with ADMIN_REQUIRE_MFA refuses a password-only token and admits otp or hwk', async () => {
    const admin = aUser({ realmId: 'master', roles: ['super-admin'] });
    const { authorize, audit } = authorizer([admin], { mfa: true });
    const input = (amr: string[]) => ({
      principal: token({ sub: admin.id, realm: 'master', roles: ['super-admin'], amr }),
      realmId: 'acme',
      action: 'users.list' as const,
      ip: null,
    });
    await expect(authorize.execute(input(['pwd']))).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringMatching(/requires MFA/),
    });
    expect(audit.entries.map((e) => e.details?.reason)).toEqual(['mfa-required']);
    await expect(authorize.execute(input(['pwd', 'otp']))).resolves.toMatchObject({ superAdmin: true, realmId: 'master' });
    await expect(authorize.execute(input(['pwd', 'hwk']))).resolves.toMatchObject({ superAdmin: true });
  });

  describe('in master, for a realm-admin of master', () => {
    const masterAdmin = aUser({ realmId: 'master', roles: ['realm-admin'] });
    const root = aUser({ realmId: 'master', roles: ['super-admin'] });
    const member = aUser({ realmId: 'master' });
    const rootSession = openSession(root.id, 'master');
    const memberSession = openSession(member.id, 'master');
    const principal = token({ sub: masterAdmin.id, realm: 'master', roles: ['realm-admin'] });

    it('refuses an action on a super-admin, named directly or through its session, and audits who was aimed at', async () => {
      const { authorize, audit } = authorizer([masterAdmin, root, member], { sessions: [rootSession, memberSession] });
      await expect(
        authorize.execute({ principal, realmId: 'master', action: 'user.sessions.revoke', targetId: root.id, ip: '10.0.0.9' }),
      ).rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringMatching(/super-admin/) });
      await expect(
        authorize.execute({ principal, realmId: 'master', action: 'session.revoke', targetId: rootSession.id, ip: null }),
      ).rejects.toMatchObject({ code: 'FORBIDDEN' });
      expect(audit.entries).toEqual([
        expect.objectContaining({
          type: 'admin.denied',
          realmId: 'master',
          userId: root.id,
          actorId: masterAdmin.id,
          ip: '10.0.0.9',
          details: { action: 'user.sessions.revoke', reason: 'super-admin-target', actorRealm: 'master', targetId: root.id },
        }),
        expect.objectContaining({
          userId: root.id,
          details: expect.objectContaining({ action: 'session.revoke', targetId: rootSession.id }),
        }),
      ]);
    });

    it("admits the same actions on master's other users, and reads that hide super-admins' sessions", async () => {
      const { authorize, audit } = authorizer([masterAdmin, root, member], { sessions: [rootSession, memberSession] });
      await expect(
        authorize.execute({ principal, realmId: 'master', action: 'session.revoke', targetId: memberSession.id, ip: null }),
      ).resolves.toMatchObject({ superAdmin: false, hidesSuperAdmins: true });
      await expect(
        authorize.execute({ principal, realmId: 'master', action: 'user.suspend', targetId: member.id, ip: null }),
      ).resolves.toBeDefined();
      // Reading a super-admin's account is no action on it.
      await expect(
        authorize.execute({ principal, realmId: 'master', action: 'user.read', targetId: root.id, ip: null }),
      ).resolves.toBeDefined();
      // An id of nobody in the realm is left to the use case's 404.
      await expect(
        authorize.execute({ principal, realmId: 'master', action: 'user.delete', targetId: crypto.randomUUID(), ip: null }),
      ).resolves.toBeDefined();
      expect(audit.entries).toEqual([]);
    });

    it("refuses changes to master's settings; the super-admin may make them", async () => {
      const { authorize } = authorizer([masterAdmin, root]);
      await expect(authorize.execute({ principal, realmId: 'master', action: 'realm.update', ip: null })).rejects.toMatchObject({
        code: 'FORBIDDEN',
        message: expect.stringMatching(/master realm/),
      });
      await expect(authorize.execute({ principal, realmId: 'master', action: 'realm.read', ip: null })).resolves.toBeDefined();
      const rootToken = token({ sub: root.id, realm: 'master', roles: ['super-admin'] });
      await expect(authorize.execute({ principal: rootToken, realmId: 'master', action: 'realm.update', ip: null })).resolves.toMatchObject(
        { superAdmin: true, hidesSuperAdmins: false },
      );
    });
  });
});

describe('admin use cases with fakes', () => {
  const clock = new FixedClock();
  const realmAdmin: AdminActor = { id: 'a1', realmId: 'master', superAdmin: false, hidesSuperAdmins: true, ip: null };
  const superAdmin: AdminActor = { id: 'root', realmId: 'master', superAdmin: true, hidesSuperAdmins: false, ip: null };

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

  it('refuses a realm-admin whose target is a super-admin on the locked row, even after the guard let it through', async () => {
    const promoted = aUser({ realmId: 'master', roles: ['super-admin'] });
    const sessions = new InMemorySessionRepository();
    await sessions.insert(openSession(promoted.id, 'master'));
    const users = new InMemoryUserRepository([promoted]);
    const suspend = new SuspendUserUseCase(users, sessions, new InMemoryAuditLog(), immediateTransaction, clock);
    await expect(suspend.execute({ actor: realmAdmin, realmId: 'master', userId: promoted.id })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect((await users.findById('master', promoted.id))!.statusAt(clock.now())).toBe('active');
    expect([...sessions.rows.values()].every((s) => !s.revokedAt)).toBe(true);
    await suspend.execute({ actor: superAdmin, realmId: 'master', userId: promoted.id });
    expect((await users.findById('master', promoted.id))!.statusAt(clock.now())).toBe('suspended');
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
    const setRoles = new SetUserRolesUseCase(users, new InMemoryRoleRepository(users), audit, immediateTransaction, clock);
    await expect(
      setRoles.execute({ actor: realmAdmin, realmId: 'master', userId: member.id, roles: ['super-admin'] }),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await setRoles.execute({ actor: superAdmin, realmId: 'master', userId: member.id, roles: ['super-admin'] });
    await expect(setRoles.execute({ actor: realmAdmin, realmId: 'master', userId: member.id, roles: [] })).rejects.toMatchObject({
      code: 'FORBIDDEN',
    });
    expect((await users.findById('master', member.id))!.roles).toEqual(['super-admin']);
    const elsewhere = aUser();
    await users.insert(elsewhere);
    await expect(
      setRoles.execute({ actor: superAdmin, realmId: 'default', userId: elsewhere.id, roles: ['super-admin'] }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(audit.types()).toEqual(['user.roles_changed']);
  });
});
