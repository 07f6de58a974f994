import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { AuditEventType } from '../../domain/audit/audit-event';

/** What pg's Pool reports; the embedded PGlite driver has no pool and reports nothing. */
interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

function poolOf(dataSource: DataSource): PoolCounts | null {
  const pool = (dataSource.driver as unknown as { master?: Partial<PoolCounts> }).master;
  return pool && typeof pool.totalCount === 'number' && typeof pool.idleCount === 'number' ? (pool as PoolCounts) : null;
}

/** `login.failed` reasons, folded into the few outcomes an operator alerts on. */
const LOGIN_FAILURE_OUTCOME: Record<string, string> = {
  unknown_user: 'invalid_credentials',
  no_password: 'invalid_credentials',
  wrong_password: 'invalid_credentials',
  suspended: 'suspended',
  locked: 'locked',
};

/** How often the event-loop lag is sampled. */
const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * The Prometheus registry of one application instance (`GET /metrics`). Counters
 * move from two places only: the HTTP middleware (every request, by route and status) and the
 * audit log (security events), so use cases carry no metrics code. Gauges are read at scrape time.
 */
@Injectable()
export class PrometheusMetrics {
  readonly registry = new Registry();

  private readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, matched route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly httpErrors = new Counter({
    name: 'identity_http_errors_total',
    help: 'Error responses by contract error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  private readonly logins = new Counter({
    name: 'identity_logins_total',
    help: 'Password logins by outcome (success, invalid_credentials, suspended, locked)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly mfaVerifications = new Counter({
    name: 'identity_mfa_verifications_total',
    help: 'Second-factor verifications by outcome (success, failure)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly refreshes = new Counter({
    name: 'identity_token_refreshes_total',
    help: 'POST /refresh answers by outcome (success, or the error code)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly reuseDetections = new Counter({
    name: 'identity_refresh_token_reuse_detected_total',
    help: 'Rotated refresh tokens presented after the leeway; each revoked its session',
    registers: [this.registry],
  });

  private readonly flaggedSessions = new Counter({
    name: 'identity_sessions_flagged_total',
    help: 'Sessions flagged by a device-fingerprint mismatch',
    registers: [this.registry],
  });

  private readonly rateLimited = new Counter({
    name: 'identity_rate_limited_requests_total',
    help: 'Requests answered 429 RATE_LIMITED, by route',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  private readonly auditEvents = new Counter({
    name: 'identity_audit_events_total',
    help: 'Audit events written, by type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  private readonly webhookDeliveries = new Counter({
    name: 'identity_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retrying (failed, due again), failed (given up)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly webhookAttemptDuration = new Histogram({
    name: 'identity_webhook_attempt_duration_seconds',
    help: 'Duration of webhook delivery attempts, by the receiver status code (or "error": no answer)',
    labelNames: ['status'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  private readonly hookCalls = new Counter({
    name: 'identity_hook_calls_total',
    help: 'Calls of the realms’ hooks, by hook and outcome: allow, deny, claims, failed',
    labelNames: ['hook', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly hookFailures = new Counter({
    name: 'identity_hook_failures_total',
    help: 'Failed calls of the realms’ hooks, by hook and reason (timeout, unreachable, status, redirect, invalid_answer …)',
    labelNames: ['hook', 'reason'] as const,
    registers: [this.registry],
  });

  private readonly hookDuration = new Histogram({
    name: 'identity_hook_call_duration_seconds',
    help: 'Duration of calls of the realms’ hooks, by hook',
    labelNames: ['hook'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5],
    registers: [this.registry],
  });

  constructor(private readonly dataSource: DataSource) {
    // The event-loop lag is sampled by a timer that wakes the loop at this interval, even while it
    // idles: every 10 ms (the library's default) costs about 1 % of a CPU and preempts whatever else
    // runs, such as password hashing on the thread pool.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    const dataSourceRef = this.dataSource;

    new Gauge({
      name: 'identity_email_outbox_backlog',
      help: 'Emails in the outbox by status: pending (not yet delivered) and failed (given up)',
      labelNames: ['status'] as const,
      registers: [this.registry],
      async collect() {
        try {
          const [row]: { pending: string; failed: string }[] = await dataSourceRef.query(
            `SELECT count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'failed') AS failed
               FROM email_outbox WHERE status IN ('pending', 'failed')`,
          );
          this.set({ status: 'pending' }, Number(row.pending));
          this.set({ status: 'failed' }, Number(row.failed));
        } catch {
          // Database unreachable: /health/ready says so; the scrape still answers.
        }
      },
    });

    new Gauge({
      name: 'identity_email_outbox_oldest_pending_seconds',
      help: 'Age of the oldest undelivered email (0 when none)',
      registers: [this.registry],
      async collect() {
        try {
          const [row]: { age: string | null }[] = await dataSourceRef.query(
            `SELECT extract(epoch FROM now() - min(created_at)) AS age FROM email_outbox WHERE status = 'pending'`,
          );
          this.set(row.age === null ? 0 : Math.max(0, Number(row.age)));
        } catch {
          // as above
        }
      },
    });

    new Gauge({
      name: 'db_pool_connections',
      help: 'PostgreSQL pool connections by state (in_use, idle); absent on the embedded database',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const pool = poolOf(dataSourceRef);
        if (!pool) return;
        this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
        this.set({ state: 'idle' }, pool.idleCount);
      },
    });

    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Queries waiting for a free PostgreSQL pool connection',
      registers: [this.registry],
      collect() {
        const pool = poolOf(dataSourceRef);
        if (pool) this.set(pool.waitingCount);
      },
    });
  }

  /** One finished HTTP request. `route` is the matched route template, never the raw path. */
  observeRequest(method: string, route: string, status: number, seconds: number, errorCode?: string): void {
    this.httpDuration.observe({ method, route, status: String(status) }, seconds);
    if (errorCode) this.httpErrors.inc({ code: errorCode });
    if (status === 429) this.rateLimited.inc({ route });
    if (method === 'POST' && route === '/api/v1/auth/refresh') {
      this.refreshes.inc({ outcome: status < 400 ? 'success' : (errorCode ?? String(status)).toLowerCase() });
    }
  }

  /** One audit event written. */
  observeAuditEvent(type: AuditEventType, details: Record<string, unknown> | undefined): void {
    this.auditEvents.inc({ type });
    switch (type) {
      case 'login.succeeded':
        this.logins.inc({ outcome: 'success' });
        break;
      case 'login.failed':
        this.logins.inc({ outcome: LOGIN_FAILURE_OUTCOME[String(details?.reason)] ?? 'failure' });
        break;
      case 'mfa.succeeded':
        this.mfaVerifications.inc({ outcome: 'success' });
        break;
      case 'mfa.failed':
        this.mfaVerifications.inc({ outcome: 'failure' });
        break;
      case 'refresh.reused':
        this.reuseDetections.inc();
        break;
      case 'session.flagged':
        this.flaggedSessions.inc();
        break;
      default:
        break;
    }
  }

  /** One webhook delivery attempt that reached the network: its answer's status (or `error`) and duration. */
  observeWebhookAttempt(status: string, seconds: number): void {
    this.webhookAttemptDuration.observe({ status }, seconds);
  }

  /** The outcome of one webhook delivery attempt. */
  observeWebhookDelivery(outcome: 'delivered' | 'retrying' | 'failed'): void {
    this.webhookDeliveries.inc({ outcome });
  }

  /** One call of a realm's hook: its outcome, its duration and, for a failure, why. */
  observeHookCall(hook: string, outcome: 'allow' | 'deny' | 'claims' | 'failed', seconds: number, reason?: string): void {
    this.hookCalls.inc({ hook, outcome });
    this.hookDuration.observe({ hook }, seconds);
    if (outcome === 'failed') this.hookFailures.inc({ hook, reason: reason ?? 'unknown' });
  }

  contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
