import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectThrottlerStorage, ThrottlerStorage } from '@nestjs/throttler';
import express from 'express';
import type { Request, Response } from 'express';
import { AppConfig } from '../../../config/app-config';
import { DomainError } from '../../../domain/errors';
import { Realm } from '../../../domain/realm/realm';
import { renderError } from '../errors/render-error';
import { ipTracker, limitKey } from '../guards/rate-limit.guard';

const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** RFC 8628 §3.5: the device polls at most every `interval` seconds (the provider answers 5). */
export const DEVICE_POLL_INTERVAL_MS = 5_000;
/** Clocks and networks jitter: a poll this much early still counts as on time. */
const POLL_TOLERANCE_MS = 500;

/**
 * What the service adds in front of a realm's token endpoint: RATE_LIMIT_OP_TOKEN per client and
 * client IP (600 a minute by default; the client as it authenticates — Basic, `client_id`, or the
 * assertion's issuer — else the client IP alone), with the RateLimit-* headers, and RFC 8628's
 * `slow_down` to a device that polls faster than the interval. The form is read here and handed
 * on to the provider as the request's body.
 */
@Injectable()
export class OpTokenLimits {
  private readonly parseForm = express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 50 });

  constructor(
    private readonly config: AppConfig,
    @InjectThrottlerStorage() private readonly limits: ThrottlerStorage,
  ) {}

  /** True when the request was answered here (refused); otherwise the provider answers it. */
  async refused(req: Request, res: Response, realm: Realm): Promise<boolean> {
    await new Promise<void>((resolve, reject) => this.parseForm(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
    const body = (req.body ?? {}) as Record<string, unknown>;
    const { limit, ttlSeconds } = this.config.rateLimits.opToken;
    const ttl = ttlSeconds * 1000;
    const client = clientOf(req, body);
    // The client a request names is unauthenticated here and client ids are public: counted per
    // client and client IP, so requests naming an app cannot use up its limit for everyone else.
    const tracker = client ? `client:${realm.id}:${client}:${ipTracker(req)}` : ipTracker(req);
    const record = await this.limits.increment(limitKey('opToken', tracker), ttl, limit, ttl, 'opToken');
    const reset = record.isBlocked ? Math.max(1, record.timeToBlockExpire) : Math.max(1, record.timeToExpire);
    res.setHeader('RateLimit-Limit', String(limit));
    res.setHeader('RateLimit-Remaining', String(record.isBlocked ? 0 : Math.max(0, limit - record.totalHits)));
    res.setHeader('RateLimit-Reset', String(reset));
    if (record.isBlocked) {
      const rendered = renderError(new DomainError('RATE_LIMITED', 'Too many requests; retry later', { retryAfterSeconds: reset }));
      for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
      res.status(rendered.status).json(rendered.body);
      return true;
    }
    if (body.grant_type === DEVICE_CODE_GRANT && typeof body.device_code === 'string') {
      const window = DEVICE_POLL_INTERVAL_MS - POLL_TOLERANCE_MS;
      const key = createHash('sha256').update(`device-poll\n${realm.id}\n${body.device_code}`).digest('base64url');
      const poll = await this.limits.increment(key, window, 1, window, 'deviceCode');
      if (poll.totalHits > 1) {
        res.setHeader('Cache-Control', 'no-store');
        res.status(400).json({ error: 'slow_down', error_description: 'the device polls faster than the interval' });
        return true;
      }
    }
    return false;
  }
}

/** The client a token request names (unauthenticated: only a key for counting). */
function clientOf(req: Request, body: Record<string, unknown>): string | null {
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (basic) {
    const user = Buffer.from(basic, 'base64').toString('utf8').split(':')[0];
    try {
      return decodeURIComponent(user.replace(/\+/g, ' '));
    } catch {
      return user;
    }
  }
  if (typeof body.client_id === 'string') return body.client_id;
  if (typeof body.client_assertion === 'string') {
    try {
      const payload = JSON.parse(Buffer.from(body.client_assertion.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iss?: unknown };
      return typeof payload.iss === 'string' ? payload.iss : null;
    } catch {
      return null;
    }
  }
  return null;
}
