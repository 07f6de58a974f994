import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { AuditLog } from '../../application/ports/audit-log';
import { Clock } from '../../application/ports/clock';
import { HookRepository } from '../../application/ports/hook.repository';
import { RegistrationAttempt, SignInAttempt, SignInHooks, TokenRequest } from '../../application/ports/sign-in-hooks';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { Hook, HOOK_CLAIMS_MAX_BYTES, HOOK_MESSAGE_MAX, HookName, RESERVED_CLAIMS } from '../../domain/hook/hook';
import { hasMfa, User } from '../../domain/user/user';
import { PrometheusMetrics } from '../metrics/prometheus-metrics';
import { OutboundConnector, pinnedExchange } from '../outbound/outbound-connector';
import { webhookSignature } from '../webhooks/webhook-sender';

/** Bytes of a hook's answer read; a longer answer is a failure. */
const MAX_ANSWER_BYTES = 16 * 1024;

const DENIED_MESSAGE = 'Refused by the realm’s rules';

/** Why a call failed, as `hook.failed` and the metrics name it. */
type FailureReason =
  | 'timeout'
  | 'unreachable'
  | 'address_refused'
  | 'redirect'
  | 'status'
  | 'answer_too_large'
  | 'invalid_answer'
  | 'reserved_claim'
  | 'claims_too_large';

/** What a hook answered, once checked. */
type Answer = { decision: 'allow' } | { decision: 'deny'; message: string } | { claims: Record<string, unknown> };

class HookCallFailure extends Error {
  constructor(
    readonly reason: FailureReason,
    detail: string,
  ) {
    super(detail);
  }
}

/**
 * The realms' hooks over HTTP: for a realm with a hook at that point, a signed POST (Standard
 * Webhooks, as the webhooks are signed) through the outbound connector — the webhooks' address
 * rules, the checked address connected to, no redirects — bounded by the hook's `timeoutMs`,
 * never retried. A failure follows the hook's policy: `deny` refuses with HOOK_FAILED, `allow`
 * goes on as if the hook had allowed and added nothing. Each refusal and failure is audited
 * (`hook.denied`, `hook.failed`) and every call counted in the metrics.
 *
 * A realm without a hook at a point costs nothing there while the per-realm copy of its hooks
 * is fresh (`HookRepository.active`): no statement, no promise.
 */
@Injectable()
export class HttpSignInHooks extends SignInHooks implements OnModuleDestroy {
  private readonly logger = new Logger('SignInHooks');
  /**
   * The context this instance was made in, outside any request's transaction: the audit events of
   * refusals and failures are written there, so that they stay when the work they refused is
   * rolled back (a token's claims are asked inside the sign-in's batch or transaction).
   */
  private readonly detached = AsyncLocalStorage.snapshot();
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly hooks: HookRepository,
    private readonly connector: OutboundConnector,
    private readonly audit: AuditLog,
    private readonly metrics: PrometheusMetrics,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {
    super();
  }

  beforeRegistration(attempt: RegistrationAttempt): Promise<void> | null {
    const { realm } = attempt;
    return this.with(
      realm.id,
      'before-registration',
      async (hook) => {
        const data = {
          email: attempt.email,
          firstName: attempt.firstName,
          lastName: attempt.lastName,
          method: attempt.method,
          ...(attempt.provider ? { provider: attempt.provider } : {}),
          ...(attempt.clientId ? { clientId: attempt.clientId } : {}),
          ip: attempt.ip,
        };
        await this.decide(hook, data, { ip: attempt.ip, details: { method: attempt.method, email: attempt.email } });
      },
      undefined,
    );
  }

  beforeSignIn(attempt: SignInAttempt): Promise<void> | null {
    const { realm, user } = attempt;
    return this.with(
      realm.id,
      'before-sign-in',
      async (hook) => {
        const data = {
          user: this.userView(user),
          method: attempt.method,
          ...(attempt.provider ? { provider: attempt.provider } : {}),
          ...(attempt.clientId ? { clientId: attempt.clientId } : {}),
          ip: attempt.ip,
          userAgent: attempt.userAgent ?? null,
        };
        await this.decide(hook, data, { ip: attempt.ip, userId: user.id, details: { method: attempt.method } });
      },
      undefined,
    );
  }

  tokenClaims(request: TokenRequest): Promise<Record<string, unknown> | null> | null {
    const { realm, user } = request;
    return this.with(
      realm.id,
      'token-claims',
      async (hook) => {
        const data = {
          user: this.userView(user),
          sessionId: request.sessionId,
          ...(request.clientId ? { clientId: request.clientId } : {}),
          ...(request.scope !== undefined ? { scope: request.scope } : {}),
          amr: [...request.amr],
          ...(request.organization ? { organization: request.organization } : {}),
        };
        const answer = await this.call(hook, data, { userId: user.id, sessionId: request.sessionId });
        return answer && 'claims' in answer ? answer.claims : null;
      },
      null,
    );
  }

  /** Resolves once no audit event of a refusal or failure is still being written. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async onModuleDestroy(): Promise<void> {
    await this.settled();
  }

  /**
   * `work` with the realm's enabled hook of that name; null — synchronously — when the realm has
   * none and its copy of the hooks is fresh.
   */
  private with<T>(realmId: string, name: HookName, work: (hook: Hook) => Promise<T>, none: T): Promise<T> | null {
    const active = this.hooks.active(realmId);
    if (!(active instanceof Promise)) {
      const hook = active.get(name);
      return hook ? work(hook) : null;
    }
    return active.then((hooks) => {
      const hook = hooks.get(name);
      return hook ? work(hook) : none;
    });
  }

  /** A decision hook: allow goes on; deny refuses with the hook's message. */
  private async decide(hook: Hook, data: Record<string, unknown>, context: AuditContext): Promise<void> {
    const answer = await this.call(hook, data, context);
    if (answer && 'decision' in answer && answer.decision === 'deny') {
      this.record(hook, 'hook.denied', context, { name: hook.name, message: answer.message, ...context.details });
      throw new DomainError('HOOK_DENIED', answer.message);
    }
  }

  /**
   * One call: the checked answer, or null after a failure under the `allow` policy.
   * @throws DomainError HOOK_FAILED after a failure under the `deny` policy
   */
  private async call(hook: Hook, data: Record<string, unknown>, context: AuditContext): Promise<Answer | null> {
    const started = performance.now();
    try {
      const answer = await this.exchange(hook, data);
      this.metrics.observeHookCall(hook.name, 'decision' in answer ? answer.decision : 'claims', (performance.now() - started) / 1000);
      return answer;
    } catch (error) {
      const ms = Math.round(performance.now() - started);
      const failure = error instanceof HookCallFailure ? error : new HookCallFailure('unreachable', String(error));
      this.metrics.observeHookCall(hook.name, 'failed', ms / 1000, failure.reason);
      this.record(hook, 'hook.failed', context, { name: hook.name, reason: failure.reason, ms, policy: hook.failure });
      if (hook.failure === 'allow') return null;
      throw new DomainError('HOOK_FAILED', 'The realm’s hook did not answer; try again');
    }
  }

  /** @throws HookCallFailure */
  private async exchange(hook: Hook, data: Record<string, unknown>): Promise<Answer> {
    const deadline = performance.now() + hook.timeoutMs;
    const body = JSON.stringify({ type: hook.name, timestamp: this.clock.now().toISOString(), realmId: hook.realmId, data });
    const id = `msg_${crypto.randomUUID()}`;
    // Receivers compare the signed timestamp with their own clock: the wall clock, always.
    const timestamp = Math.floor(Date.now() / 1000);
    const policy = { allowHttp: this.config.webhookAllowHttp, allowPrivateNetworks: this.config.webhookAllowPrivateNetworks, field: 'url' };
    const checked = await withinDeadline(this.connector.check(hook.url, policy), deadline).catch((error: unknown) => {
      if (error instanceof DomainError) throw new HookCallFailure('address_refused', error.message);
      throw error;
    });
    const remaining = Math.max(1, Math.round(deadline - performance.now()));
    const answer = await pinnedExchange(checked.url, checked.target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': webhookSignature([hook.secret], id, timestamp, body),
      },
      body,
      timeoutMs: remaining,
      read: MAX_ANSWER_BYTES,
    }).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (/no answer within/.test(message)) throw new HookCallFailure('timeout', message);
      if (/answer larger than/.test(message)) throw new HookCallFailure('answer_too_large', message);
      throw new HookCallFailure('unreachable', message);
    });
    if (answer.status >= 300 && answer.status < 400) throw new HookCallFailure('redirect', `answered ${answer.status}`);
    if (answer.status !== 200) throw new HookCallFailure('status', `answered ${answer.status}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body?.toString('utf8') ?? '');
    } catch {
      throw new HookCallFailure('invalid_answer', 'not JSON');
    }
    return hook.name === 'token-claims' ? claimsAnswer(parsed) : decisionAnswer(parsed);
  }

  /** Writes an audit event outside the caller's unit of work, without making the caller wait for it. */
  private record(hook: Hook, type: 'hook.denied' | 'hook.failed', context: AuditContext, details: Record<string, unknown>): void {
    const write = this.detached(() =>
      this.audit.record({
        type,
        realmId: hook.realmId,
        userId: context.userId ?? null,
        sessionId: null,
        ip: context.ip ?? null,
        at: this.clock.now(),
        details,
      }),
    )
      .catch((error: unknown) => this.logger.error(`${type} not recorded: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  /** The user as the admin API shows it (without linked identities). */
  private userView(user: User) {
    const profile = user.profile;
    return {
      id: user.id,
      email: user.email,
      emailVerified: user.emailVerified,
      profile: { firstName: profile.firstName, lastName: profile.lastName, avatar: profile.avatar },
      mfa: { enabled: hasMfa(user), methods: user.mfaMethods },
      status: user.statusAt(this.clock.now()),
      roles: user.roles,
      appMetadata: user.appMetadata,
      hasPassword: user.hasPassword,
      createdAt: user.createdAt.toISOString(),
      lastLoginAt: user.lastLoginAt ? user.lastLoginAt.toISOString() : null,
    };
  }
}

interface AuditContext {
  ip?: string;
  userId?: string;
  sessionId?: string;
  details?: Record<string, unknown>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{"decision": "allow"}` or `{"decision": "deny", "message"}` (the message cut to 200 characters, without control characters). */
function decisionAnswer(value: unknown): Answer {
  if (!isObject(value)) throw new HookCallFailure('invalid_answer', 'not a JSON object');
  if (value.decision === 'allow') return { decision: 'allow' };
  if (value.decision !== 'deny') throw new HookCallFailure('invalid_answer', 'decision is neither "allow" nor "deny"');
  if (value.message !== undefined && typeof value.message !== 'string')
    throw new HookCallFailure('invalid_answer', 'message is not a string');
  const cleaned = [...(value.message ?? '').replace(/\p{Cc}/gu, ' ').trim()].slice(0, HOOK_MESSAGE_MAX).join('');
  return { decision: 'deny', message: cleaned || DENIED_MESSAGE };
}

/** `{"claims": {…}}`: an object of at most 2 KiB serialised, without a reserved name. */
function claimsAnswer(value: unknown): Answer {
  if (!isObject(value) || !isObject(value.claims)) throw new HookCallFailure('invalid_answer', 'claims is not a JSON object');
  const reserved = Object.keys(value.claims).find((name) => RESERVED_CLAIMS.has(name));
  if (reserved) throw new HookCallFailure('reserved_claim', `claim ${reserved} is reserved`);
  if (Buffer.byteLength(JSON.stringify(value.claims)) > HOOK_CLAIMS_MAX_BYTES) {
    throw new HookCallFailure('claims_too_large', `claims over ${HOOK_CLAIMS_MAX_BYTES} bytes`);
  }
  return { claims: value.claims };
}

/** `work`, or a timeout failure at `deadline` (a name lookup has no deadline of its own). */
function withinDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new HookCallFailure('timeout', 'no answer in time')), Math.max(0, deadline - performance.now()));
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
