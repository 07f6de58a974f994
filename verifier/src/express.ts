import { AccessTokenError, KeysUnavailableError, type AccessTokenVerifier, type VerifiedAccessToken } from './verifier.js';

/** The parts of an Express (or plain Node) request the middleware reads. */
export interface RequestLike {
  method: string;
  /** Express: the path and query as the client sent them, before any router mount point was cut. */
  originalUrl?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
  protocol?: string;
  /** Set by the middleware on success. */
  accessToken?: VerifiedAccessToken;
}

/** The parts of a response the middleware writes on a refusal. */
export interface ResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
}

export interface AccessTokenMiddlewareOptions {
  /**
   * The origin clients call this backend at (scheme, host, port), e.g. `https://api.example.com`,
   * to rebuild the URL a DPoP proof must name (`htu`). Set it behind a proxy or load balancer;
   * by default it is taken from the request (`req.protocol`, honouring Express's `trust proxy`,
   * and the Host header).
   */
  publicOrigin?: string;
}

/**
 * Express middleware: checks the access token (and DPoP proof) of every request it sees. On
 * success `req.accessToken` holds the {@link VerifiedAccessToken} and the next handler runs; on
 * refusal it answers 401 with `WWW-Authenticate` and `{"error": code, "error_description": …}`.
 * When the issuer's keys cannot be had it answers 503 with `Retry-After` (the verifier logs why).
 * Any other failure goes to Express's error handling.
 */
export function requireAccessToken(verifier: AccessTokenVerifier, options: AccessTokenMiddlewareOptions = {}) {
  return (req: RequestLike, res: ResponseLike, next: (error?: unknown) => void): void => {
    verifier
      .verify({
        authorization: req.headers.authorization,
        dpop: req.headers.dpop,
        method: req.method,
        url: requestUrl(req, options.publicOrigin),
      })
      .then((token) => {
        req.accessToken = token;
        next();
      })
      .catch((error: unknown) => {
        if (error instanceof KeysUnavailableError) {
          res.statusCode = error.status;
          res.setHeader('Retry-After', '5');
          res.setHeader('Cache-Control', 'no-store');
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify({ error: 'temporarily_unavailable', error_description: 'The access token cannot be checked now' }));
          return;
        }
        if (!(error instanceof AccessTokenError)) return next(error);
        res.statusCode = error.status;
        res.setHeader('WWW-Authenticate', error.wwwAuthenticate);
        res.setHeader('Cache-Control', 'no-store');
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ error: error.code, error_description: error.message }));
      });
  };
}

/**
 * Express middleware, after {@link requireAccessToken}: the request goes on when the token holds
 * at least one of `roles`; otherwise it answers 403 `{"error":"insufficient_role", …}`. Roles
 * reach tokens at their next refresh, so a role granted or removed counts within the token's
 * lifetime (15 minutes by default).
 */
export function requireRole(...roles: string[]) {
  if (roles.length === 0) throw new TypeError('requireRole needs at least one role');
  return (req: RequestLike, res: ResponseLike, next: (error?: unknown) => void): void => {
    const token = req.accessToken;
    if (!token) return next(new Error('requireRole runs after requireAccessToken'));
    if (roles.some((role) => token.roles.includes(role))) return next();
    res.statusCode = 403;
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Type', 'application/json');
    const wanted = roles.map((role) => `"${role}"`).join(' or ');
    res.end(JSON.stringify({ error: 'insufficient_role', error_description: `This requires the role ${wanted}` }));
  };
}

/**
 * Express middleware, after {@link requireAccessToken}: the request goes on when the session's
 * active organization (the token's `org` claim) gives the user at least one of `roles`; otherwise
 * 403 `{"error":"insufficient_role", …}` — also when the session works in no organization. Scope
 * the data by `req.accessToken.organization.id`.
 */
export function requireOrganizationRole(...roles: string[]) {
  if (roles.length === 0) throw new TypeError('requireOrganizationRole needs at least one role');
  return (req: RequestLike, res: ResponseLike, next: (error?: unknown) => void): void => {
    const token = req.accessToken;
    if (!token) return next(new Error('requireOrganizationRole runs after requireAccessToken'));
    const held = token.organization?.roles ?? [];
    if (roles.some((role) => held.includes(role))) return next();
    res.statusCode = 403;
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Type', 'application/json');
    const wanted = roles.map((role) => `"${role}"`).join(' or ');
    const description = token.organization
      ? `This requires the organization role ${wanted}`
      : `This requires an active organization and the organization role ${wanted}`;
    res.end(JSON.stringify({ error: 'insufficient_role', error_description: description }));
  };
}

/** The URL the client called: the public origin (or the request's own) and the original path. */
export function requestUrl(req: RequestLike, publicOrigin?: string): string {
  const path = req.originalUrl ?? req.url ?? '/';
  if (publicOrigin) return `${publicOrigin.replace(/\/+$/, '')}${path}`;
  const host = Array.isArray(req.headers.host) ? req.headers.host[0] : req.headers.host;
  return `${req.protocol ?? 'http'}://${host ?? 'localhost'}${path}`;
}
