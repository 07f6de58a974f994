import { PurgeStalledError } from '../../../src/application/ports/expired-data-purger';
import { HousekeepingUseCase, MAX_BATCHES_PER_RUN } from '../../../src/application/housekeeping/housekeeping.use-case';
import { loadConfig } from '../../../src/config/load-config';
import { realmDefaultsFrom } from '../../../src/application/realm/realm-defaults';
import { Realm } from '../../../src/domain/realm/realm';
import { noOverrides } from '../../../src/domain/realm/realm-settings';
import {
  InMemoryExpiredDataPurger,
  InMemoryJobLock,
  InMemoryRealmRepository,
  RotatingAccessTokens,
  RotatingIdTokenKeys,
} from '../../fakes/in-memory-housekeeping';
import { TestClock } from '../../support/test-clock';

const NOW = new Date('2026-11-25T12:00:00.000Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000);

function setup(purger = new InMemoryExpiredDataPurger(), keyAgeDays = 1, keyRotationDays = 90, realms: Realm[] = []) {
  const config = loadConfig({
    SESSION_RETENTION_DAYS: '30',
    AUDIT_RETENTION_DAYS: '365',
    KEY_ROTATION_DAYS: String(keyRotationDays),
    SESSION_IDLE_TIMEOUT_SECONDS: '604800',
  });
  const lock = new InMemoryJobLock();
  const tokens = new RotatingAccessTokens(daysAgo(keyAgeDays));
  const useCase = new HousekeepingUseCase(
    lock,
    purger,
    tokens,
    new RotatingIdTokenKeys(daysAgo(keyAgeDays)),
    new InMemoryRealmRepository(realms),
    new TestClock(NOW),
    config,
  );
  return { useCase, lock, tokens, purger };
}

describe('HousekeepingUseCase', () => {
  it('passes each purge its retention cutoff', async () => {
    const { useCase, purger } = setup();
    await useCase.execute();
    const cutoffs = Object.fromEntries(purger.calls.map((c) => [c.kind, c.cutoff.toISOString()]));
    expect(cutoffs).toEqual({
      sessions: daysAgo(30).toISOString(),
      tokens: daysAgo(1).toISOString(),
      emails: daysAgo(7).toISOString(),
      webhooks: daysAgo(7).toISOString(),
      audit: daysAgo(365).toISOString(),
      opArtifacts: NOW.toISOString(),
    });
  });

  it('deletes in batches until a batch comes back short, and reports the totals', async () => {
    const purger = new InMemoryExpiredDataPurger(
      Array.from({ length: 7 }, () => daysAgo(31)),
      [daysAgo(2), NOW],
      Array.from({ length: 4 }, () => daysAgo(8)),
      [daysAgo(400), daysAgo(10)],
    );
    const { useCase } = setup(purger);
    const report = await useCase.execute({ batchSize: 3 });
    expect(report).toEqual({
      ran: true,
      closedSessions: 0,
      sessions: 7,
      oneTimeTokens: 1,
      deliveredEmails: 4,
      deliveredWebhooks: 0,
      auditEvents: 1,
      opArtifacts: 0,
      stalled: [],
      rotatedKey: null,
      rotatedIdTokenKey: null,
    });
    expect(purger.calls.filter((c) => c.kind === 'sessions').map((c) => c.limit)).toEqual([3, 3, 3]); // 3 + 3 + 1
    expect(purger.calls.filter((c) => c.kind === 'emails')).toHaveLength(2); // 3 + 1
    expect(purger.sessionsEnded).toEqual([]);
    expect(purger.tokensSpent).toEqual([NOW]);
  });

  it("closes each realm's sessions that ended by time, in batches and under that realm's lifetime, before the purge", async () => {
    const realm = (id: string, idleTimeoutSeconds: number) =>
      Realm.restore(
        {
          id,
          name: id,
          enabled: true,
          overrides: { ...noOverrides(), sessionIdleTimeoutSeconds: idleTimeoutSeconds },
          createdAt: daysAgo(100),
          updatedAt: daysAgo(100),
        },
        realmDefaultsFrom(loadConfig({})),
      );
    const purger = new InMemoryExpiredDataPurger([daysAgo(31)]);
    purger.endedOpen.set('short', 5).set('long', 1);
    const closing: { realm: string; idle: number }[] = [];
    const close = purger.closeEndedSessions.bind(purger);
    purger.closeEndedSessions = (realmId, now, lifetime, limit) => {
      closing.push({ realm: realmId, idle: lifetime.idleTimeoutSeconds });
      expect(now).toEqual(NOW);
      return close(realmId, now, lifetime, limit);
    };
    const { useCase } = setup(purger, 1, 90, [realm('short', 3600), realm('long', 86_400)]);

    const report = await useCase.execute({ batchSize: 2 });

    expect(report).toMatchObject({ closedSessions: 6, sessions: 1 });
    // Realms come oldest first, then by id, as the database lists them.
    expect(closing).toEqual([
      { realm: 'long', idle: 86_400 },
      { realm: 'short', idle: 3600 },
      { realm: 'short', idle: 3600 },
      { realm: 'short', idle: 3600 },
    ]);
    expect(purger.calls.findIndex((c) => c.kind === 'sessions')).toBeGreaterThan(purger.calls.findIndex((c) => c.kind === 'close long'));
    expect([...purger.endedOpen.values()]).toEqual([0, 0]);
  });

  it('stops after MAX_BATCHES_PER_RUN batches of one table and leaves the rest to the next run', async () => {
    const purger = new InMemoryExpiredDataPurger(Array.from({ length: MAX_BATCHES_PER_RUN + 5 }, () => daysAgo(40)));
    const { useCase } = setup(purger);
    expect((await useCase.execute({ batchSize: 1 })).sessions).toBe(MAX_BATCHES_PER_RUN);
    expect((await useCase.execute({ batchSize: 1 })).sessions).toBe(5);
  });

  it('reports a purge that stalled, counts what it deleted before, and goes on with the other purges', async () => {
    class StallingPurger extends InMemoryExpiredDataPurger {
      override async purgeEndedSessions(endedBefore: Date, limit: number): Promise<number> {
        const deleted = await super.purgeEndedSessions(endedBefore, Math.min(limit, 2));
        throw new PurgeStalledError(deleted);
      }
    }
    const purger = new StallingPurger(
      Array.from({ length: 5 }, () => daysAgo(31)),
      [daysAgo(2)],
      [],
      [daysAgo(400)],
    );
    const { useCase } = setup(purger);
    const report = await useCase.execute({ batchSize: 3 });
    expect(report).toMatchObject({ ran: true, sessions: 2, oneTimeTokens: 1, auditEvents: 1, stalled: ['sessions'] });
    expect(purger.calls.filter((c) => c.kind === 'sessions')).toHaveLength(1);
    expect(purger.sessionsEnded).toHaveLength(3);
  });

  it('lets any other purge failure end the run', async () => {
    class FailingPurger extends InMemoryExpiredDataPurger {
      override async purgeDeliveredEmails(): Promise<number> {
        throw new Error('connection lost');
      }
    }
    const { useCase } = setup(new FailingPurger());
    await expect(useCase.execute()).rejects.toThrow('connection lost');
  });

  it('rotates the signing key once it is older than KEY_ROTATION_DAYS, and only then', async () => {
    const young = setup(undefined, 89);
    expect((await young.useCase.execute()).rotatedKey).toBeNull();
    const old = setup(undefined, 91);
    expect((await old.useCase.execute()).rotatedKey).toBe('kid-1');
    expect((await old.useCase.execute()).rotatedKey).toBeNull();
    expect(old.tokens.rotations).toBe(1);
  });

  it('never rotates twice within the longest access-token lifetime of any realm', async () => {
    // A row written before the per-realm range existed: restored as stored.
    const longLived = Realm.restore(
      {
        id: 'kiosk',
        name: 'Kiosk',
        enabled: true,
        overrides: { ...noOverrides(), accessTokenTtlSeconds: 3 * 86_400 },
        createdAt: daysAgo(100),
        updatedAt: daysAgo(100),
      },
      realmDefaultsFrom(loadConfig({})),
    );
    expect((await setup(undefined, 2, 1, [longLived]).useCase.execute()).rotatedKey).toBeNull();
    expect((await setup(undefined, 4, 1, [longLived]).useCase.execute()).rotatedKey).toBe('kid-1');
    expect((await setup(undefined, 2, 1).useCase.execute()).rotatedKey).toBe('kid-1');
  });

  it('does nothing while another instance holds the lock', async () => {
    const purger = new InMemoryExpiredDataPurger([daysAgo(31)]);
    const { useCase, lock, tokens } = setup(purger, 200);
    lock.heldElsewhere = true;
    expect(await useCase.execute()).toEqual({
      ran: false,
      closedSessions: 0,
      sessions: 0,
      oneTimeTokens: 0,
      deliveredEmails: 0,
      deliveredWebhooks: 0,
      auditEvents: 0,
      opArtifacts: 0,
      stalled: [],
      rotatedKey: null,
      rotatedIdTokenKey: null,
    });
    expect(purger.calls).toEqual([]);
    expect(tokens.rotations).toBe(0);
  });
});
