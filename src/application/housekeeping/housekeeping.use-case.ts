import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { AccessTokens } from '../ports/access-tokens';
import { Clock } from '../ports/clock';
import { IdTokenKeys } from '../ports/id-token-keys';
import { ExpiredDataPurger, PurgeStalledError } from '../ports/expired-data-purger';
import { JobLock } from '../ports/job-lock';
import { RealmRepository } from '../ports/realm.repository';

const DAY_MS = 86_400_000;
/** Rows per DELETE statement. */
export const PURGE_BATCH_SIZE = 500;
/** Batches per table and run: a large backlog is worked off over several runs. */
export const MAX_BATCHES_PER_RUN = 200;
/** Delivered emails are kept this long (their bodies are already emptied on delivery). */
/** Sent emails and delivered webhook deliveries are kept this long (for support questions), then purged. */
export const DELIVERED_EMAIL_RETENTION_DAYS = 7;
/**
 * Spent one-time tokens are kept a day, so that an expired mfaToken still answers
 * TOKEN_EXPIRED rather than INVALID_TOKEN for a while.
 */
export const SPENT_TOKEN_RETENTION_DAYS = 1;
export const HOUSEKEEPING_LOCK = 'housekeeping';
/** Other instances may sign with a retired key until they re-read the keys (at most a minute). */
const KEY_CACHE_MARGIN_MS = 60_000;

/** The counts of a housekeeping run, one per purge. */
type PurgeTotals = Pick<
  HousekeepingReport,
  'closedSessions' | 'sessions' | 'oneTimeTokens' | 'deliveredEmails' | 'deliveredWebhooks' | 'auditEvents' | 'opArtifacts'
>;

export interface HousekeepingReport {
  /** False when another instance held the lock: nothing was done. */
  ran: boolean;
  /** Sessions that had ended by time, marked revoked at their end. */
  closedSessions: number;
  sessions: number;
  oneTimeTokens: number;
  deliveredEmails: number;
  deliveredWebhooks: number;
  auditEvents: number;
  /** The OpenID provider's expired codes, tokens, sessions and grants. */
  opArtifacts: number;
  /**
   * The purges that stopped early because their statements kept running past their time bound
   * (report keys, such as `sessions`); the rest of their rows waits for the next run.
   */
  stalled: (keyof PurgeTotals)[];
  /** The new signing key's kid when the key was rotated. */
  rotatedKey: string | null;
  /** The new ID-token key's kid when that key was rotated. */
  rotatedIdTokenKey: string | null;
}

export interface HousekeepingOptions {
  batchSize?: number;
  /** Asked between batches: true stops the run early (shutdown). */
  shouldStop?: () => boolean;
}

/**
 * Keeps the database from growing forever and rotates the signing key: closes the sessions that
 * ended by time (so each realm's kept count of open sessions stays near its live ones), purges
 * ended sessions with their refresh tokens after SESSION_RETENTION_DAYS, spent one-time tokens,
 * delivered emails after 7 days, audit events after AUDIT_RETENTION_DAYS; a new signing key
 * every KEY_ROTATION_DAYS, the previous one staying in the JWKS. One instance at a time.
 */
@Injectable()
export class HousekeepingUseCase {
  constructor(
    private readonly lock: JobLock,
    private readonly purger: ExpiredDataPurger,
    private readonly accessTokens: AccessTokens,
    private readonly idTokenKeys: IdTokenKeys,
    private readonly realms: RealmRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  async execute(options: HousekeepingOptions = {}): Promise<HousekeepingReport> {
    const report: HousekeepingReport = {
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
    };
    const limit = options.batchSize ?? PURGE_BATCH_SIZE;
    const stop = options.shouldStop ?? (() => false);
    const drain = async (what: keyof PurgeTotals, purge: () => Promise<number>): Promise<number> => {
      let total = 0;
      for (let batch = 0; batch < MAX_BATCHES_PER_RUN && !stop(); batch += 1) {
        let deleted: number;
        try {
          deleted = await purge();
        } catch (error) {
          if (!(error instanceof PurgeStalledError)) throw error;
          if (!report.stalled.includes(what)) report.stalled.push(what);
          return total + error.deleted;
        }
        total += deleted;
        if (deleted < limit) break;
      }
      return total;
    };

    report.ran = await this.lock.runExclusive(HOUSEKEEPING_LOCK, async () => {
      const now = this.clock.now().getTime();
      const { sessionRetentionDays, auditRetentionDays, keyRotationDays } = this.config;
      const realms = await this.realms.list();
      const policies = realms.map((realm) => realm.policy);
      if (!stop()) {
        // The JWKS keeps the current and the previous key only: never rotate twice within the
        // longest access-token lifetime, or the key of still-valid tokens would drop out.
        const longestTtlMs = Math.max(this.config.accessTokenTtlSeconds, ...policies.map((policy) => policy.accessTokenTtlSeconds)) * 1000;
        const cutoff = new Date(now - Math.max(keyRotationDays * DAY_MS, longestTtlMs + KEY_CACHE_MARGIN_MS));
        report.rotatedKey = await this.accessTokens.rotateIfOlderThan(cutoff, new Date(now));
        report.rotatedIdTokenKey = await this.idTokenKeys.rotateIfOlderThan(cutoff, new Date(now));
      }
      for (const realm of realms) {
        report.closedSessions += await drain('closedSessions', () =>
          this.purger.closeEndedSessions(realm.id, new Date(now), realm.policy.sessionLifetime, limit),
        );
      }
      report.sessions = await drain('sessions', () => this.purger.purgeEndedSessions(new Date(now - sessionRetentionDays * DAY_MS), limit));
      report.oneTimeTokens = await drain('oneTimeTokens', () =>
        this.purger.purgeSpentOneTimeTokens(new Date(now - SPENT_TOKEN_RETENTION_DAYS * DAY_MS), limit),
      );
      report.deliveredEmails = await drain('deliveredEmails', () =>
        this.purger.purgeDeliveredEmails(new Date(now - DELIVERED_EMAIL_RETENTION_DAYS * DAY_MS), limit),
      );
      report.deliveredWebhooks = await drain('deliveredWebhooks', () =>
        this.purger.purgeDeliveredWebhooks(new Date(now - DELIVERED_EMAIL_RETENTION_DAYS * DAY_MS), limit),
      );
      report.auditEvents = await drain('auditEvents', () =>
        this.purger.purgeAuditEvents(new Date(now - auditRetentionDays * DAY_MS), limit),
      );
      report.opArtifacts = await drain('opArtifacts', () => this.purger.purgeExpiredOpArtifacts(new Date(now), limit));
    });
    return report;
  }
}
