import { RefreshTokenRepository } from '../../src/application/ports/refresh-token.repository';
import { SessionRepository } from '../../src/application/ports/session.repository';
import { UserRepository } from '../../src/application/ports/user.repository';
import { Session } from '../../src/domain/session/session';
import { aUser } from '../builders/user.builder';
import { InMemoryRefreshTokenRepository } from '../fakes/in-memory-refresh-token.repository';
import { InMemorySessionRepository } from '../fakes/in-memory-session.repository';
import { InMemoryUserRepository } from '../fakes/in-memory-user.repository';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * One contract, two implementations: the in-memory fakes used by unit tests and the TypeORM
 * repositories on the real database must behave alike, so the fakes cannot drift.
 */
interface Repos {
  users: UserRepository;
  sessions: SessionRepository;
  refreshTokens: RefreshTokenRepository;
}

const now = new Date('2026-11-25T12:00:00.000Z');
const policy = { maxFailures: 3, durationSeconds: 60 };
const LIFETIME = { idleTimeoutSeconds: 3600, maxLifetimeSeconds: 86400 };

function aSession(userId: string, realmId = 'default'): Session {
  return Session.open({
    id: crypto.randomUUID(),
    realmId,
    userId,
    device: { id: crypto.randomUUID(), name: 'Firefox 140 on Linux', type: 'browser', fingerprint: null },
    referenceFingerprint: { client: null, server: { browser: 'Firefox' } },
    ip: '203.0.113.7',
    location: { country: null, city: null },
    userAgent: 'UA',
    amr: ['pwd'],
    now,
    lifetime: LIFETIME,
  });
}

function contract(name: string, setup: () => Promise<{ repos: Repos; teardown: () => Promise<void> }>) {
  describe(`repository contract: ${name}`, () => {
    let repos: Repos;
    let teardown: () => Promise<void>;
    beforeAll(async () => {
      ({ repos, teardown } = await setup());
    });
    afterAll(async () => teardown());

    it('finds a user by id and by email only within its realm', async () => {
      const user = aUser();
      await repos.users.insert(user);
      expect((await repos.users.findById('default', user.id))?.email).toBe(user.email);
      expect((await repos.users.findByEmail('default', user.email))?.id).toBe(user.id);
      expect(await repos.users.findById('master', user.id)).toBeNull();
      expect(await repos.users.findByEmail('master', user.email)).toBeNull();
    });

    it('refuses a duplicate email in a realm with EMAIL_ALREADY_REGISTERED', async () => {
      const user = aUser();
      await repos.users.insert(user);
      await expect(repos.users.insert(aUser({ email: user.email }))).rejects.toMatchObject({ code: 'EMAIL_ALREADY_REGISTERED' });
      await repos.users.insert(aUser({ email: user.email, realmId: 'master' }));
    });

    it('counts failed logins and locks at the limit, then ignores further failures while locked', async () => {
      const user = aUser();
      await repos.users.insert(user);
      expect(await repos.users.recordFailedLogin('default', user.id, policy, now)).toEqual({ failures: 1, lockedNow: false });
      expect(await repos.users.recordFailedLogin('default', user.id, policy, now)).toEqual({ failures: 2, lockedNow: false });
      expect(await repos.users.recordFailedLogin('default', user.id, policy, now)).toEqual({ failures: 3, lockedNow: true });
      expect(await repos.users.recordFailedLogin('default', user.id, policy, now)).toBeNull();
      const locked = await repos.users.findById('default', user.id);
      expect(locked?.statusAt(now)).toBe('locked');
      expect(locked?.lockRemainingSeconds(now)).toBe(60);
      const later = new Date(now.getTime() + 60_000);
      expect(await repos.users.recordFailedLogin('default', user.id, policy, later)).toEqual({ failures: 1, lockedNow: false });
    });

    it('persists every field save() is given', async () => {
      const user = aUser();
      await repos.users.insert(user);
      user.suspend(now);
      user.setRoles(['realm-admin'], now);
      user.verifyEmail(now);
      await repos.users.save(user);
      const stored = await repos.users.findById('default', user.id);
      expect(stored?.statusAt(now)).toBe('suspended');
      expect(stored?.roles).toEqual(['realm-admin']);
      expect(stored?.emailVerified).toBe(true);
      expect(await repos.users.existsWithRole('default', 'realm-admin')).toBe(true);
    });

    it('reports live sessions, revokes once, and revokes all of a user but one', async () => {
      const user = aUser();
      await repos.users.insert(user);
      const [a, b, c] = [aSession(user.id), aSession(user.id), aSession(user.id)];
      for (const s of [a, b, c]) await repos.sessions.insert(s);
      expect(await repos.sessions.isLive('default', a.id, now, LIFETIME)).toBe(true);
      expect(await repos.sessions.isLive('master', a.id, now, LIFETIME)).toBe(false);
      expect(await repos.sessions.isLive('default', a.id, new Date(now.getTime() + 3601_000), LIFETIME)).toBe(false);
      expect(await repos.sessions.revoke('default', a.id, now, 'logout')).toBe(true);
      expect(await repos.sessions.revoke('default', a.id, now, 'logout')).toBe(false);
      expect(await repos.sessions.revokeAllForUser('default', user.id, now, 'admin', b.id)).toBe(1);
      expect(await repos.sessions.isLive('default', b.id, now, LIFETIME)).toBe(true);
      expect(await repos.sessions.isLive('default', c.id, now, LIFETIME)).toBe(false);
    });

    it("lists a realm's live sessions without those of the excluded users, counted alike, and finds the holders of a role", async () => {
      const realmId = 'master';
      const [kept, hidden] = [aUser({ realmId }), aUser({ realmId, roles: ['super-admin'] })];
      for (const user of [kept, hidden]) await repos.users.insert(user);
      for (const session of [aSession(kept.id, realmId), aSession(hidden.id, realmId), aSession(hidden.id, realmId)]) {
        await repos.sessions.insert(session);
      }
      const query = { realmId, page: 1, limit: 100, now, lifetime: LIFETIME };
      const all = await repos.sessions.list(query);
      const listed = await repos.sessions.list({ ...query, excludeUserIds: [hidden.id] });
      expect(all.sessions.filter((s) => s.userId === hidden.id)).toHaveLength(2);
      expect(listed.total).toBe(all.total - 2);
      expect(listed.sessions.map((s) => s.userId)).toContain(kept.id);
      expect(listed.sessions.map((s) => s.userId)).not.toContain(hidden.id);
      expect((await repos.sessions.list({ ...query, userId: hidden.id, excludeUserIds: [hidden.id] })).total).toBe(0);
      expect((await repos.sessions.list({ ...query, excludeUserIds: [] })).total).toBe(all.total);
      const superAdmins = await repos.users.idsWithRole(realmId, 'super-admin');
      expect([superAdmins.includes(hidden.id), superAdmins.includes(kept.id)]).toEqual([true, false]);
    });

    it('never lets a copy read before a revocation bring the session back', async () => {
      const user = aUser();
      await repos.users.insert(user);
      const session = aSession(user.id);
      await repos.sessions.insert(session);
      const stale = await repos.sessions.findById('default', session.id); // read by a refresh in flight
      expect(await repos.sessions.revoke('default', session.id, now, 'logout')).toBe(true);

      stale!.flagMismatch(0.2, now);
      expect(await repos.sessions.save(stale!)).toBe(false);

      const stored = await repos.sessions.findById('default', session.id);
      expect(stored?.revokedAt).toEqual(now);
      expect(stored?.status).toBe('active');
      expect(await repos.sessions.isLive('default', session.id, now, LIFETIME)).toBe(false);
      const live = aSession(user.id);
      await repos.sessions.insert(live);
      live.flagMismatch(0.2, now);
      expect(await repos.sessions.save(live)).toBe(true);
      expect((await repos.sessions.findById('default', live.id))?.status).toBe('flagged');
    });

    it('ends sessions already open when the realm shortens its maximum lifetime, not when it lengthens it', async () => {
      const user = aUser();
      await repos.users.insert(user);
      const session = aSession(user.id);
      await repos.sessions.insert(session);
      const later = new Date(now.getTime() + 1801_000);
      const shorter = { idleTimeoutSeconds: 3600, maxLifetimeSeconds: 1800 };
      expect(await repos.sessions.isLive('default', session.id, later, LIFETIME)).toBe(true);
      expect(await repos.sessions.isLive('default', session.id, later, shorter)).toBe(false);
      expect(await repos.users.findWithLiveSession('default', user.id, session.id, later, shorter)).toBeNull();
      // Opened with a 86400 s lifetime: a longer one does not extend it.
      const afterItsEnd = new Date(now.getTime() + 86_401_000);
      const longer = { idleTimeoutSeconds: 31_536_000, maxLifetimeSeconds: 31_536_000 };
      expect(await repos.sessions.isLive('default', session.id, afterItsEnd, longer)).toBe(false);
    });

    it('finds a refresh token with its session and user, and rotates it exactly once', async () => {
      const user = aUser();
      await repos.users.insert(user);
      const session = aSession(user.id);
      await repos.sessions.insert(session);
      await repos.refreshTokens.insert('hash-1', session.id, now);
      const found = await repos.refreshTokens.findWithSession('hash-1');
      expect(found?.session.id).toBe(session.id);
      expect(found?.user.id).toBe(user.id);
      expect(found?.token.rotatedAt).toBeNull();
      expect(await repos.refreshTokens.markRotated('hash-1', now)).toBe(true);
      expect(await repos.refreshTokens.markRotated('hash-1', now)).toBe(false);
      expect((await repos.refreshTokens.rotatedAt('hash-1'))?.toISOString()).toBe(now.toISOString());
      expect(await repos.refreshTokens.findWithSession('unknown')).toBeNull();
    });

    it('finds a user through a live session of theirs only', async () => {
      const user = aUser();
      const other = aUser();
      await repos.users.insert(user);
      await repos.users.insert(other);
      const session = aSession(user.id);
      await repos.sessions.insert(session);
      expect((await repos.users.findWithLiveSession('default', user.id, session.id, now, LIFETIME))?.email).toBe(user.email);
      expect(await repos.users.findWithLiveSession('default', other.id, session.id, now, LIFETIME)).toBeNull();
      expect(await repos.users.findWithLiveSession('master', user.id, session.id, now, LIFETIME)).toBeNull();
      expect(
        await repos.users.findWithLiveSession('default', user.id, session.id, new Date(now.getTime() + 3601_000), LIFETIME),
      ).toBeNull();
      expect(await repos.users.findWithLiveSession('default', user.id, 'not-a-uuid', now, LIFETIME)).toBeNull();
      await repos.sessions.revoke('default', session.id, now, 'logout');
      expect(await repos.users.findWithLiveSession('default', user.id, session.id, now, LIFETIME)).toBeNull();
    });

    it('rotates a refresh token in one step: successor stored, session use recorded, only once', async () => {
      const user = aUser();
      await repos.users.insert(user);
      const session = aSession(user.id);
      await repos.sessions.insert(session);
      await repos.refreshTokens.insert('rot-1', session.id, now);
      const later = new Date(now.getTime() + 60_000);
      session.touch(later, '198.51.100.9', { country: 'DE', city: 'Berlin' });
      const outcomes = await Promise.all([
        repos.refreshTokens.rotate('rot-1', 'rot-2', session, later),
        repos.refreshTokens.rotate('rot-1', 'rot-2b', session, later),
      ]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      expect((await repos.refreshTokens.rotatedAt('rot-1'))?.toISOString()).toBe(later.toISOString());
      const successor = await repos.refreshTokens.findWithSession(outcomes[0] ? 'rot-2' : 'rot-2b');
      expect(successor?.token.rotatedAt).toBeNull();
      const used = successor?.session.snapshot();
      expect(used?.lastActiveAt.toISOString()).toBe(later.toISOString());
      expect(used?.ip).toBe('198.51.100.9');
      expect(used?.location).toEqual({ country: 'DE', city: 'Berlin' });
      expect(await repos.refreshTokens.findWithSession(outcomes[0] ? 'rot-2b' : 'rot-2')).toBeNull();
      expect(await repos.refreshTokens.rotate('unknown', 'rot-3', session, later)).toBe(false);
    });
  });
}

contract('in-memory fakes', async () => {
  const users = new InMemoryUserRepository();
  const sessions = new InMemorySessionRepository();
  users.sessions = sessions;
  return {
    repos: { users, sessions, refreshTokens: new InMemoryRefreshTokenRepository(sessions, users) },
    teardown: async () => undefined,
  };
});

contract('TypeORM on the database', async () => {
  const t: TestApp = await createTestApp();
  return {
    repos: { users: t.app.get(UserRepository), sessions: t.app.get(SessionRepository), refreshTokens: t.app.get(RefreshTokenRepository) },
    teardown: () => t.close(),
  };
});
