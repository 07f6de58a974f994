import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { TokenSet } from '../../application/sign-in/session-issuer';
import { AppConfig } from '../../config/app-config';
import { originMatcher } from '../../config/origins';
import { DomainError, DomainErrorCode } from '../../domain/errors';
import { present } from './presenters';

/** The request header that asks for the refresh token in a cookie, and allows reading it. */
export const REFRESH_TRANSPORT_HEADER = 'X-Refresh-Token-Transport';
const TRANSPORT_HEADER = REFRESH_TRANSPORT_HEADER.toLowerCase();
/** `__Host-`: the browser keeps it only if Secure, Path=/ and without Domain, so no subdomain can plant or read it. */
const COOKIE_PREFIX = '__Host-refresh-';
const ATTRIBUTES = 'Path=/; HttpOnly; Secure; SameSite=Strict';
/**
 * The session hint: readable by scripts, no secret in it, set and cleared with the refresh cookie,
 * so a page can tell without a request (and without a 401 when signed out) whether a session may exist.
 */
const HINT_PREFIX = '__Host-session-';
const HINT_ATTRIBUTES = 'Path=/; Secure; SameSite=Strict';
/** Refresh tokens are base64url; anything else in the cookie is not one of ours. */
const TOKEN_VALUE = /^[A-Za-z0-9_-]{16,256}$/;

/** The cookie of a realm's refresh token. Realm ids are slugs, valid in a cookie name as they are. */
export function refreshCookieName(realmId: string): string {
  return `${COOKIE_PREFIX}${realmId}`;
}

/** The realm's session-hint cookie (`__Host-session-<realmId>=1`). */
export function sessionHintCookieName(realmId: string): string {
  return `${HINT_PREFIX}${realmId}`;
}

/**
 * The refresh token in an HttpOnly cookie, for browser apps that must not hold it in script-readable
 * storage. The cookie is SameSite=Strict and is read only when the request carries
 * `X-Refresh-Token-Transport: cookie` — a header no cross-site form can send and no cross-origin
 * script can send without a CORS preflight — and, when it has an Origin, comes from the service's
 * own origin (API_URL) or one of CORS_ORIGINS.
 */
@Injectable()
export class RefreshCookies {
  private readonly trusted: (origin: string) => boolean;

  constructor(config: AppConfig) {
    this.trusted = originMatcher([new URL(config.apiUrl).origin, ...config.corsOrigins]);
  }

  /** The request asks for (and may read) the cookie transport. */
  requested(req: Request): boolean {
    return req.headers[TRANSPORT_HEADER] === 'cookie';
  }

  /**
   * The refresh token of a request: the body's when it has one, else the realm's cookie.
   * @throws DomainError INVALID_TOKEN when there is neither; FORBIDDEN when the cookie may not be read
   */
  tokenOf(req: Request, realmId: string, bodyToken: string | undefined): string {
    if (bodyToken) return bodyToken;
    const cookie = cookieValue(req.headers.cookie, refreshCookieName(realmId));
    if (cookie === null) throw new DomainError('INVALID_TOKEN', 'No refresh token was presented');
    if (!this.mayRead(req)) {
      throw new DomainError(
        'FORBIDDEN',
        'The refresh-token cookie is read only with the header X-Refresh-Token-Transport: cookie, from a trusted origin',
      );
    }
    return cookie;
  }

  /** What the rate limiter keys on: the body's token, else a cookie it may read; never throws. */
  readableToken(req: Request, realmId: string, bodyToken: string | null): string | null {
    if (bodyToken) return bodyToken;
    if (!this.mayRead(req)) return null;
    const cookie = cookieValue(req.headers.cookie, refreshCookieName(realmId));
    return cookie !== null && TOKEN_VALUE.test(cookie) ? cookie : null;
  }

  /**
   * The `tokens` object of a response. With the cookie transport requested, the refresh token
   * leaves as a cookie that lives until the session's absolute end, and not in the body.
   */
  deliver(req: Request, res: Response, realmId: string, tokens: TokenSet): ReturnType<typeof present.tokens> {
    if (!this.requested(req)) return present.tokens(tokens);
    res.append('Set-Cookie', `${refreshCookieName(realmId)}=${tokens.refreshToken}; ${ATTRIBUTES}; Max-Age=${tokens.refreshExpiresIn}`);
    res.append('Set-Cookie', `${sessionHintCookieName(realmId)}=1; ${HINT_ATTRIBUTES}; Max-Age=${tokens.refreshExpiresIn}`);
    return present.tokens(tokens, { refreshToken: false });
  }

  /** Tells the browser to drop the realm's cookie and its session hint. */
  clear(res: Response, realmId: string): void {
    res.append('Set-Cookie', `${refreshCookieName(realmId)}=; ${ATTRIBUTES}; Max-Age=0`);
    res.append('Set-Cookie', `${sessionHintCookieName(realmId)}=; ${HINT_ATTRIBUTES}; Max-Age=0`);
  }

  /** Runs `work`; when it fails with one of `codes` and the cookie transport is in use, the cookie is cleared. */
  async clearingOn<T>(codes: DomainErrorCode[], req: Request, res: Response, realmId: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof DomainError && codes.includes(error.code) && this.requested(req)) this.clear(res, realmId);
      throw error;
    }
  }

  private mayRead(req: Request): boolean {
    if (!this.requested(req)) return false;
    const origin = req.headers.origin;
    return origin === undefined || this.trusted(origin);
  }
}

/** The first value of cookie `name` in a Cookie header, or null. Our cookie's value is never quoted or encoded. */
function cookieValue(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq > 0 && pair.slice(0, eq).trim() === name) {
      const value = pair.slice(eq + 1).trim();
      return value.length > 0 ? value : null;
    }
  }
  return null;
}
