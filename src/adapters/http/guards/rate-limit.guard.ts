import { createHash } from 'node:crypto';
import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  ThrottlerGuard,
  ThrottlerModuleOptions,
  ThrottlerOptions,
  ThrottlerRequest,
  ThrottlerStorage,
} from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { MfaChallenges } from '../../../application/sign-in/mfa-challenges';
import { RefreshTokenResolver } from '../../../application/sign-in/refresh-token-resolver';
import { AppConfig } from '../../../config/app-config';
import { DomainError } from '../../../domain/errors';
import { Email } from '../../../domain/user/email';
import { RATE_LIMIT, RateLimitName } from '../decorators';
import { RefreshCookies } from '../refresh-cookies';
import { AppRequest, clientIp } from '../request-context';

const LIMITS = [
  'login',
  'register',
  'refresh',
  'mfaVerify',
  'emailRequests',
  'emailCode',
  'emailCodeIp',
  'signInVerify',
  'federation',
  'invitationAccept',
  'default',
] as const satisfies readonly RateLimitName[];
/** As long as the body validation allows, so the limiter and the route pick the same token. */
const MAX_TOKEN_LENGTH = 256;

/** The rows of the rate-limit table a route counts against: those named by @RateLimit, else `default`. */
function limitsOf(context: ExecutionContext): RateLimitName[] {
  return (
    (Reflect.getMetadata(RATE_LIMIT, context.getHandler()) as RateLimitName[] | undefined) ??
    (Reflect.getMetadata(RATE_LIMIT, context.getClass()) as RateLimitName[] | undefined) ?? ['default']
  );
}

/**
 * One named throttler per row of the rate-limit table, values from configuration (`count/seconds`). Every
 * named throttler would apply to every route, so each skips all routes but its own: a route
 * counts against the limits it names, and only those.
 */
export function throttlerOptions(config: AppConfig): ThrottlerModuleOptions {
  return {
    setHeaders: false, // RateLimitGuard sends the RateLimit-* headers itself
    throttlers: LIMITS.map((name) => ({
      name,
      limit: config.rateLimits[name].limit,
      ttl: config.rateLimits[name].ttlSeconds * 1000,
      skipIf: (context: ExecutionContext) => !limitsOf(context).includes(name),
    })),
  };
}

/** The storage key of a limit's counter for one tracker (`ip:…`, `user:…`): hashed, so Redis never holds an address or a user id. */
export function limitKey(name: RateLimitName, tracker: string): string {
  return createHash('sha256').update(`${name}\n${tracker}`).digest('base64url');
}

/** The tracker of limits kept per client IP; IPv6 clients are counted per /64 (one subscriber usually holds a whole /64). */
export function ipTracker(req: Request): string {
  return `ip:${normalizeIp(clientIp(req))}`;
}

function bodyToken(req: AppRequest, field: string): string | null {
  const value = (req.body as Record<string, unknown> | undefined)?.[field];
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_TOKEN_LENGTH ? value : null;
}

/**
 * Rate limits. Runs after RealmGuard and AccessTokenGuard, so the realm and the
 * principal are known. Keys: email codes by address (and by client IP, a second limit); login,
 * register, email requests and passwordless answers by client IP (Express `req.ip`,
 * which honours TRUST_PROXY only); refresh by the user the refresh token belongs to; MFA verify
 * by the user behind the mfaToken; other routes by the authenticated user, else by IP. Requests
 * whose user cannot be resolved count against their IP. Keys are hashed: Redis never holds an
 * address or a user id.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: Reflector,
    private readonly refreshTokens: RefreshTokenResolver,
    private readonly mfaChallenges: MfaChallenges,
    private readonly cookies: RefreshCookies,
  ) {
    super(options, storage, reflector);
  }

  /** Per route: the throttlers it counts against, or null when the base class must decide (overrides present). */
  private readonly plans = new WeakMap<object, WeakMap<object, ThrottlerOptions[] | null>>();

  /**
   * Each route counts against the named limits it declares (every other throttler's skipIf says so), with
   * their configured values. The base class finds this out on every request by asking each
   * of the throttlers for its skip flag and its per-route overrides (some fifty metadata
   * look-ups and awaits); the answer is fixed per route, so it is worked out once. A route that
   * carries any @Throttle/@SkipThrottle metadata goes through the base class as before.
   */
  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const throttlers = this.planOf(context);
    if (throttlers === null) return super.canActivate(context);
    for (const throttler of throttlers) {
      const ttl = throttler.ttl as number;
      await this.handleRequest({
        context,
        limit: throttler.limit as number,
        ttl,
        blockDuration: (throttler.blockDuration as number | undefined) ?? ttl,
        throttler,
        getTracker: this.commonOptions.getTracker!,
        generateKey: this.commonOptions.generateKey!,
      });
    }
    return true;
  }

  private planOf(context: ExecutionContext): ThrottlerOptions[] | null {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byHandler = this.plans.get(controller);
    if (byHandler === undefined) this.plans.set(controller, (byHandler = new WeakMap()));
    let plan = byHandler.get(handler);
    if (plan === undefined) {
      const throttlers = limitsOf(context).map((name) => this.throttlers.find((t) => t.name === name));
      const overridden = [handler, controller].some((target) =>
        Reflect.getMetadataKeys(target).some((key) => typeof key === 'string' && key.startsWith('THROTTLER:')),
      );
      const plain = (throttler: ThrottlerOptions | undefined): throttler is ThrottlerOptions =>
        throttler !== undefined &&
        typeof throttler.limit === 'number' &&
        typeof throttler.ttl === 'number' &&
        (throttler.blockDuration === undefined || typeof throttler.blockDuration === 'number') &&
        throttler.ignoreUserAgents === undefined &&
        this.commonOptions.ignoreUserAgents === undefined;
      plan = throttlers.every(plain) && !overridden ? throttlers : null;
      byHandler.set(handler, plan);
    }
    return plan;
  }

  protected override async handleRequest({ context, limit, ttl, blockDuration, throttler }: ThrottlerRequest): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<AppRequest>();
    const res = http.getResponse<Response>();
    const name = throttler.name as RateLimitName;
    const tracker = await this.trackerOf(name, req);
    const key = limitKey(name, tracker);
    const record = await this.storageService.increment(key, ttl, limit, blockDuration, name);
    const reset = record.isBlocked ? Math.max(1, record.timeToBlockExpire) : Math.max(1, record.timeToExpire);
    const remaining = record.isBlocked ? 0 : Math.max(0, limit - record.totalHits);
    // Of several limits, the headers describe the one closest to refusing.
    const shown = res.getHeader('RateLimit-Remaining');
    if (shown === undefined || remaining < Number(shown)) {
      res.setHeader('RateLimit-Limit', String(limit));
      res.setHeader('RateLimit-Remaining', String(remaining));
      res.setHeader('RateLimit-Reset', String(reset));
    }
    if (record.isBlocked) {
      throw new DomainError('RATE_LIMITED', 'Too many requests; retry later', { retryAfterSeconds: reset });
    }
    return true;
  }

  private async trackerOf(name: RateLimitName, req: AppRequest): Promise<string> {
    if (name === 'refresh') {
      const token = req.realm ? this.cookies.readableToken(req, req.realm.id, bodyToken(req, 'refreshToken')) : null;
      if (token && req.realm) {
        // The handler reuses this lookup (RefreshInput.known): one query, not two.
        req.refreshTokenContext = await this.refreshTokens.resolve(req.realm, token);
        if (req.refreshTokenContext) return `user:${req.refreshTokenContext.user.id}`;
      }
    } else if (name === 'mfaVerify') {
      const token = bodyToken(req, 'mfaToken');
      const challenge = token ? await this.mfaChallenges.find(token) : null;
      if (challenge && challenge.realmId === req.realm?.id) return `user:${challenge.userId}`;
    } else if ((name === 'default' || name === 'invitationAccept') && req.principal) {
      return `user:${req.principal.sub}`;
    } else if (name === 'emailCode') {
      const email = bodyToken(req, 'email');
      // Per address of the realm, as the account would be found: "Alice@X " and "alice@x" share it.
      if (email && req.realm) return `email:${req.realm.id}:${Email.normalise(email)}`;
    }
    return ipTracker(req);
  }
}
