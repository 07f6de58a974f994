import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import { originMatcher } from '../../config/origins';

/** Headers a browser client may send and read. */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Realm-Id',
  'X-Device-Fingerprint',
  'X-Request-Id',
  'X-Refresh-Token-Transport',
  'DPoP',
];
type CorsSetting = NonNullable<Parameters<INestApplication['enableCors']>[0]>;

const EXPOSED_HEADERS = [
  'X-Request-Id',
  'Retry-After',
  'WWW-Authenticate',
  'DPoP-Nonce',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
];

/**
 * helmet's security headers. API answers are JSON that no page should render or frame
 * (`default-src 'none'`); Swagger UI under /docs loads its own scripts and styles.
 */
export function securityHeaders(): RequestHandler {
  const common = {
    frameguard: { action: 'deny' as const },
    referrerPolicy: { policy: 'no-referrer' as const },
  };
  const api = helmet({
    ...common,
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  });
  const docs = helmet({
    ...common,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
  });
  const [apiHeaders, docsHeaders] = [fixedHeaders(api), fixedHeaders(docs)];
  return (req: Request, res: Response, next: NextFunction) => {
    (req.path === '/docs' || req.path.startsWith('/docs/') ? docsHeaders : apiHeaders)(res);
    next();
  };
}

/**
 * The headers `middleware` sets, worked out once. helmet configured without per-request values
 * (no nonces) sets the same headers on every answer: setting them directly saves its dozen
 * layers on every request. Only `setHeader` and `removeHeader` are expected of the middleware.
 */
export function fixedHeaders(middleware: RequestHandler): (res: Response) => void {
  const set: [string, string | number | readonly string[]][] = [];
  const removed: string[] = [];
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => void set.push([name, value]),
    removeHeader: (name: string) => void removed.push(name),
  };
  let done = false;
  middleware({} as Request, recorder as unknown as Response, (error?: unknown) => {
    if (error) throw error;
    done = true;
  });
  if (!done) throw new Error('the middleware did not finish at once: its headers cannot be fixed');
  return (res) => {
    for (const [name, value] of set) res.setHeader(name, value);
    for (const name of removed) res.removeHeader(name);
  };
}

/**
 * CORS from `CORS_ORIGINS`: a listed origin gets the CORS headers, credentials
 * included; any other origin gets none, so the browser withholds the answer. Without a list,
 * no origin is allowed.
 */
export function corsPolicy(origins: string[]): CorsSetting {
  const allowed = originMatcher(origins);
  const granted = {
    credentials: true,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  };
  return (req: Request, callback: (error: Error | null, options: object) => void) => {
    const origin = req.headers.origin;
    if (typeof origin === 'string' && allowed(origin)) callback(null, { ...granted, origin });
    else callback(null, { origin: false });
  };
}

/** Answers differ by Origin: caches must keep them apart. */
export function varyOnOrigin(_req: Request, res: Response, next: NextFunction): void {
  res.vary('Origin');
  next();
}

/**
 * A preflight the CORS policy declined (an unlisted origin) ends here with 204 and no CORS headers,
 * so the browser refuses the real request; it would otherwise reach the router and answer 404.
 */
export function endDeclinedPreflights(req: Request, res: Response, next: NextFunction): void {
  if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
    res.status(204).end();
    return;
  }
  next();
}
