import { Client } from 'pg';
import { AuditLog } from '../../src/application/ports/audit-log';
import { RefreshTokenRepository } from '../../src/application/ports/refresh-token.repository';
import { SessionRepository } from '../../src/application/ports/session.repository';
import { Transaction } from '../../src/application/ports/transaction';
import { SignInRefusedError, UserRepository } from '../../src/application/ports/user.repository';
import { sqlState } from '../../src/adapters/persistence/database-errors';
import { PGliteClient } from '../../src/adapters/persistence/pglite-serial-driver';
import { TypeOrmSigningKeyStore } from '../../src/adapters/persistence/typeorm-signing-key-store';
import { TypeOrmTransaction } from '../../src/adapters/persistence/typeorm-transaction';
import { Session } from '../../src/domain/session/session';
import { User } from '../../src/domain/user/user';
import { aUser } from '../builders/user.builder';
import { login, register } from '../support/flows';
import { createTestApp, TestApp } from '../support/test-app';

const at = new Date('2026-11-25T12:00:00.000Z');

function aSession(userId: string): Session {
  const session = Session.open({
    id: crypto.randomUUID(),
    realmId: 'default',
    userId,
    device: { id: crypto.randomUUID(), name: 'Firefox 140 on Linux', type: 'browser', fingerprint: 'fp-1' },
    referenceFingerprint: { client: { canvas: 'c1', fonts: ['a', 'b'] }, server: { browser: 'Firefox' } },
    ip: '203.0.113.7',
    location: { country: 'DE', city: 'Berlin' },
    userAgent: 'Mozilla/5.0',
    amr: ['pwd', 'otp'],
    now: at,
    lifetime: { idleTimeoutSeconds: 3600, maxLifetimeSeconds: 86400 },
  });
  session.flagMismatch(0.42, at); // every column gets a value
  return session;
}

/**
 * The writes of a password login through `Transaction.batch`, on the database of the run
 * (PostgreSQL with DATABASE_URL, the embedded PGlite without): one statement, all or nothing.
 */
describe('Transaction.batch', () => {
  let t: TestApp;
  let tx: TypeOrmTransaction;
  let users: UserRepository;
  let sessions: SessionRepository;
  let refreshTokens: RefreshTokenRepository;
  let audit: AuditLog;

  beforeAll(async () => {
    t = await createTestApp();
    tx = t.app.get(TypeOrmTransaction);
    expect(t.app.get(Transaction)).toBe(tx);
    users = t.app.get(UserRepository);
    sessions = t.app.get(SessionRepository);
    refreshTokens = t.app.get(RefreshTokenRepository);
    audit = t.app.get(AuditLog);
  });
  afterAll(async () => t.close());

  async function aStoredUser(): Promise<User> {
    const user = aUser({ status: 'locked', lockedUntil: new Date(at.getTime() - 1000), failedLoginCount: 3 });
    await users.insert(user);
    return user;
  }

  /** What a successful login writes, in its order. */
  async function loginWrites(user: User, session: Session, tokenHash: string): Promise<void> {
    await users.recordSuccessfulLogin('default', user.id, at);
    await sessions.insert(session);
    await refreshTokens.insert(tokenHash, session.id, at);
    await audit.record({
      type: 'login.succeeded',
      realmId: 'default',
      userId: user.id,
      sessionId: session.id,
      ip: '203.0.113.7',
      at,
      details: { amr: ['pwd'], nested: { n: 1 } },
    });
  }

  /** A batch of a login's writes, then `next` (another write, a read, a throw). */
  function loginWritesThen(user: User, session: Session, next: () => Promise<unknown>): Promise<void> {
    return tx.batch(async () => {
      await loginWrites(user, session, `rt-${crypto.randomUUID()}`);
      await next();
    });
  }

  async function auditedLogins(userId: string) {
    return (await audit.list({ realmId: 'default', userId, type: 'login.succeeded', page: 1, limit: 10 })).events;
  }

  async function expectNothingWritten(user: User, session: Session): Promise<void> {
    expect(await sessions.findById('default', session.id)).toBeNull();
    const stored = await users.findById('default', user.id);
    expect(stored?.snapshot()).toMatchObject({ failedLoginCount: 3, status: 'locked', lastLoginAt: null });
    expect(await auditedLogins(user.id)).toEqual([]);
  }

  it('lands every write of a login: user update, session, its refresh token and the audit event', async () => {
    const user = await aStoredUser();
    const session = aSession(user.id);
    const tokenHash = `rt-${crypto.randomUUID()}`;

    await expect(tx.batch(() => loginWrites(user, session, tokenHash))).resolves.toBeUndefined();

    expect((await sessions.findById('default', session.id))?.snapshot()).toEqual(session.snapshot());
    const token = await refreshTokens.findWithSession(tokenHash);
    expect(token?.token).toEqual({ tokenHash, sessionId: session.id, createdAt: at, rotatedAt: null });
    expect(token?.user.id).toBe(user.id);
    expect((await users.findById('default', user.id))?.snapshot()).toMatchObject({
      failedLoginCount: 0,
      status: 'active',
      lockedUntil: null,
      lastLoginAt: at,
    });
    const events = await auditedLogins(user.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ sessionId: session.id, ip: '203.0.113.7', at, details: { amr: ['pwd'], nested: { n: 1 } } });
  });

  it('stores nothing of a login whose account was locked or suspended while its password was checked', async () => {
    const states = [
      { status: 'locked', lockedUntil: null },
      { status: 'locked', lockedUntil: new Date(at.getTime() + 60_000) },
      { status: 'suspended', lockedUntil: null },
    ] as const;
    for (const state of states) {
      const user = aUser({ ...state, failedLoginCount: 5 });
      await users.insert(user);
      const session = aSession(user.id);

      await expect(tx.batch(() => loginWrites(user, session, `rt-${crypto.randomUUID()}`))).rejects.toBeInstanceOf(SignInRefusedError);

      expect(await sessions.findById('default', session.id)).toBeNull();
      expect(await auditedLogins(user.id)).toEqual([]);
      const stored = await users.findById('default', user.id);
      expect(stored?.snapshot()).toMatchObject({ ...state, failedLoginCount: 5, lastLoginAt: null });
    }
  });

  it('refuses a required write that matches no row alone, inside run (rolled back) and in a batch', async () => {
    const locked = aUser({ status: 'locked', lockedUntil: null });
    await users.insert(locked);
    await expect(users.recordSuccessfulLogin('default', locked.id, at)).rejects.toBeInstanceOf(SignInRefusedError);
    await expect(tx.batch(() => users.recordSuccessfulLogin('default', locked.id, at))).rejects.toBeInstanceOf(SignInRefusedError);
    const session = aSession(locked.id);
    await expect(
      tx.run(async () => {
        await sessions.insert(session);
        await users.recordSuccessfulLogin('default', locked.id, at);
      }),
    ).rejects.toBeInstanceOf(SignInRefusedError);
    expect(await sessions.findById('default', session.id)).toBeNull();
    expect((await users.findById('default', locked.id))?.lastLoginAt).toBeNull();
  });

  it('returns what work returns, and writes nothing for work without writes', async () => {
    await expect(tx.batch(async () => 'result')).resolves.toBe('result');
  });

  it('writes nothing when one write violates a unique key', async () => {
    const other = await aStoredUser();
    const otherSession = aSession(other.id);
    await tx.batch(() => loginWrites(other, otherSession, 'taken-hash'));
    const user = await aStoredUser();
    const session = aSession(user.id);

    const failed = tx.batch(() => loginWrites(user, session, 'taken-hash'));

    await expect(failed).rejects.toThrow();
    expect(sqlState(await failed.catch((e: unknown) => e))).toBe('23505');
    await expectNothingWritten(user, session);
  });

  it('writes nothing when one write violates a foreign key', async () => {
    const user = await aStoredUser();
    const session = aSession(user.id);

    const failed = loginWritesThen(user, session, () => refreshTokens.insert(`rt-${crypto.randomUUID()}`, crypto.randomUUID(), at)); // no such session

    expect(sqlState(await failed.catch((e: unknown) => e))).toBe('23503');
    await expectNothingWritten(user, session);
  });

  it('writes nothing when work throws after queueing writes', async () => {
    const user = await aStoredUser();
    const session = aSession(user.id);

    await expect(
      loginWritesThen(user, session, async () => {
        throw new Error('signing failed');
      }),
    ).rejects.toThrow('signing failed');

    await expectNothingWritten(user, session);
  });

  it('runs afterCommit effects once the batch statement or the commit succeeded, never for writes that failed', async () => {
    const seen: string[] = [];
    tx.afterCommit(() => seen.push('outside'));
    expect(seen).toEqual(['outside']);

    const user = await aStoredUser();
    await tx.batch(async () => {
      await loginWrites(user, aSession(user.id), `rt-${crypto.randomUUID()}`);
      tx.afterCommit(() => seen.push('batch'));
      expect(seen).toEqual(['outside']); // only queued so far
    });
    expect(seen).toEqual(['outside', 'batch']);

    const other = await aStoredUser();
    const failed = loginWritesThen(other, aSession(other.id), async () => {
      await refreshTokens.insert(`rt-${crypto.randomUUID()}`, crypto.randomUUID(), at); // no such session
      tx.afterCommit(() => seen.push('failed batch'));
    });
    expect(sqlState(await failed.catch((e: unknown) => e))).toBe('23503');

    await tx.run(async () => {
      tx.afterCommit(() => seen.push('run'));
      expect(seen).not.toContain('run');
    });
    await expect(
      tx.run(async () => {
        tx.afterCommit(() => seen.push('rolled back'));
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    tx.afterCommit(() => {
      throw new Error('an effect that fails');
    });
    expect(seen).toEqual(['outside', 'batch', 'run']);
  });

  it('refuses reads, statements other than writes and run inside a batch, and then writes nothing', async () => {
    const user = await aStoredUser();
    const session = aSession(user.id);
    const attempts: Array<() => Promise<unknown>> = [
      async () => tx.manager.query('SELECT 1'),
      () => users.findById('default', user.id), // a prepared statement
      () => users.list({ realmId: 'default', page: 1, limit: 5, search: 'x', sort: 'email', now: at }), // a search
      () => sessions.revoke('default', session.id, at, 'logout'), // a write that answers
      () => tx.run(async () => undefined),
    ];

    for (const attempt of attempts) {
      await expect(loginWritesThen(user, session, attempt)).rejects.toThrow(/inside Transaction\.batch/);
    }

    await expectNothingWritten(user, session);
  });

  it('inside run, writes at once in the transaction and rolls back with it', async () => {
    const user = await aStoredUser();
    const session = aSession(user.id);

    await expect(
      tx.run(async () => {
        await tx.batch(() => loginWrites(user, session, `rt-${crypto.randomUUID()}`));
        expect(await sessions.findById('default', session.id)).not.toBeNull(); // read in the transaction
        throw new Error('later step failed');
      }),
    ).rejects.toThrow('later step failed');
    await expectNothingWritten(user, session);

    await tx.run(() => tx.batch(() => loginWrites(user, session, `rt-${crypto.randomUUID()}`)));
    expect(await sessions.findById('default', session.id)).not.toBeNull();
  });

  it('joins an outer batch: the inner writes are part of the same statement', async () => {
    const user = await aStoredUser();
    const session = aSession(user.id);

    const failed = loginWritesThen(user, session, () =>
      tx.batch(() => refreshTokens.insert(`rt-${crypto.randomUUID()}`, crypto.randomUUID(), at)),
    );

    expect(sqlState(await failed.catch((e: unknown) => e))).toBe('23503');
    await expectNothingWritten(user, session);
  });

  it('refuses a write queued after its batch was sent', async () => {
    let late: Promise<void> | undefined;
    await tx.batch(async () => {
      late = new Promise<void>((resolve) => setTimeout(resolve, 5)).then(() =>
        audit.record({ type: 'login.succeeded', realmId: 'default', at }),
      );
    });
    await expect(late).rejects.toThrow(/after its batch was sent/);
  });

  it('reads the signing keys inside a batch (the key cache refilled while a login signs)', async () => {
    const keys = await tx.batch(() => t.app.get(TypeOrmSigningKeyStore).published());
    expect(keys.length).toBeGreaterThan(0);
  });

  it('keeps the repositories writing at once outside any batch or transaction', async () => {
    const user = await aStoredUser();
    const session = aSession(user.id);
    await loginWrites(user, session, `rt-${crypto.randomUUID()}`);
    expect(await sessions.findById('default', session.id)).not.toBeNull();
    expect(await auditedLogins(user.id)).toHaveLength(1);
  });

  it('sends a password login to the database as the user lookup and one statement (no BEGIN/COMMIT)', async () => {
    const { email } = await register(t);
    expect((await login(t, email)).status).toBe(200); // caches warm (realm, signing keys)
    // Every statement goes through a client of the driver: pg's Client, or the embedded driver's.
    const clientPrototype = (t.config.databaseUrl ? Client.prototype : PGliteClient.prototype) as {
      query: (...args: unknown[]) => unknown;
    };
    const spy = jest.spyOn(clientPrototype, 'query');
    try {
      expect((await login(t, email)).status).toBe(200);
      const texts = spy.mock.calls.map(([query]) => (typeof query === 'string' ? query : (query as { text: string }).text));
      expect(texts).toHaveLength(2);
      expect(texts[0]).toMatch(/^SELECT .* FROM users u WHERE u\.realm_id = \$1 AND u\.email = \$2$/s);
      expect(texts[1]).toMatch(
        /^WITH w0 AS \(UPDATE users .*\), w1 AS \(INSERT INTO sessions .*\), w2 AS \(INSERT INTO refresh_tokens .*\), w3 AS \(INSERT INTO audit_events .*\) SELECT require_written\(EXISTS \(SELECT 1 FROM w0\), 0\)$/s,
      );
    } finally {
      spy.mockRestore();
    }
  });
});
