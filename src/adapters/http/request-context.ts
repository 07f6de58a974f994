import type { Request } from 'express';
import { ClientContext } from '../../application/sign-in/client-context';
import { DpopRequest } from '../../application/sign-in/dpop-binding';
import { Principal } from '../../application/auth/authenticate.use-case';
import { RefreshTokenContext } from '../../application/ports/refresh-token.repository';
import { Realm } from '../../domain/realm/realm';

/** The Express request as the guards leave it. */
export interface AppRequest extends Request {
  requestId: string;
  realm?: Realm;
  principal?: Principal;
  /** The refresh token's context, looked up once by the rate limiter (keyed by its user) and reused by the handler. */
  refreshTokenContext?: RefreshTokenContext | null;
}

/** The client's address: the socket's, or per `TRUST_PROXY` (Express `req.ip`), IPv4-mapped IPv6 unwrapped. */
export function clientIp(req: Request): string {
  const ip = req.ip ?? req.socket.remoteAddress ?? '';
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

function header(req: Request, name: string): string | null {
  const value = req.headers[name];
  return typeof value === 'string' ? value : null;
}

export function clientContext(req: Request, bodyFingerprint?: string | null): ClientContext {
  return {
    ip: clientIp(req),
    userAgent: header(req, 'user-agent'),
    acceptLanguage: header(req, 'accept-language'),
    fingerprint: bodyFingerprint ?? header(req, 'x-device-fingerprint'),
  };
}

/**
 * The request as a DPoP proof must describe it: the `DPoP` header (null when absent; two headers
 * arrive joined by a comma and fail as malformed), the method and the path without the query.
 */
export function dpopRequest(req: Request): DpopRequest {
  const proof = req.headers.dpop;
  const url = req.originalUrl ?? req.url;
  const query = url.indexOf('?');
  return { proof: typeof proof === 'string' ? proof : null, method: req.method, path: query < 0 ? url : url.slice(0, query) };
}
