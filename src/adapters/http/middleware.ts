import { randomUUID } from 'node:crypto';
import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { DomainError } from '../../domain/errors';
import { renderError } from './errors/render-error';
import { AppRequest } from './request-context';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;
export const BODY_LIMIT = '64kb';

function send(res: Response, error: unknown): void {
  const rendered = renderError(error);
  for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
  res.status(rendered.status).json(rendered.body);
}

/** Echoes a safe client X-Request-Id or makes one; logs carry the same id. */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
  (req as AppRequest).requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
}

/** API answers carry tokens and personal data: never cached (RFC 6749 §5.1). */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  next();
}

/**
 * `handler` for requests under one of `prefixes` (`/api` matches `/api` and `/api/…`, any case,
 * as Express's `app.use(prefixes, handler)` does; the handler sees the full URL); others pass.
 */
export function under(prefixes: readonly string[], handler: RequestHandler): RequestHandler {
  const lower = prefixes.map((prefix) => prefix.toLowerCase());
  return (req, res, next) => {
    const url = req.url;
    for (const prefix of lower) {
      if (url.length >= prefix.length && url.slice(0, prefix.length).toLowerCase() === prefix) {
        const after = url.charCodeAt(prefix.length);
        // the end of the path, '/' or the query (Express's mount-path boundary)
        if (Number.isNaN(after) || after === 0x2f || after === 0x3f) return handler(req, res, next);
      }
    }
    next();
  };
}

/**
 * Middleware run one after another as a single Express layer. Express's router does per-layer
 * work on every request (path matching, prefix trimming, parameter processing); the global
 * middleware run for every request, so they share one layer. A handler's `next(error)` (or a
 * throw) skips the rest and hands the error to Express, as separate layers would.
 */
export function inSequence(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error !== undefined && error !== null && error !== 'route') return done(error);
      const handler = handlers[index++];
      if (handler === undefined) return done();
      try {
        const returned = handler(req, res, next) as unknown;
        if (returned instanceof Promise) returned.catch(done);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** The deepest nesting of objects and arrays a body may have (the API's bodies need 5: app metadata nests 3 levels below `appMetadata`). */
export const MAX_JSON_DEPTH = 32;
const TOO_DEEP = 'entity.too.deep';

/**
 * Whether raw JSON text nests objects and arrays deeper than `max` (brackets inside strings do
 * not count). One pass, no recursion: it runs before JSON.parse, so a 60 KB `[[[[…` never reaches
 * the recursive code after it (validation, transformation) and overflows its stack.
 */
export function nestsDeeperThan(raw: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (const byte of raw) {
    if (inString) {
      if (escaped) escaped = false;
      else if (byte === 0x5c) escaped = true;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x7b || byte === 0x5b) {
      if (++depth > max) return true;
    } else if (byte === 0x7d || byte === 0x5d) depth -= 1;
  }
  return false;
}

const parseJson = express.json({
  limit: BODY_LIMIT,
  type: ['application/json', 'application/*+json'],
  strict: true,
  verify: (_req, _res, raw) => {
    if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) throw Object.assign(new Error('The request body is nested too deeply'), { type: TOO_DEEP });
  },
});

/**
 * JSON bodies only (415 otherwise), at most 64 KiB (413) and 32 levels deep (400), malformed
 * JSON → 400, all in the API's error envelope. Body-less POSTs (e.g. `/users/:id/activate`) are fine.
 */
export function jsonBody(req: Request, res: Response, next: NextFunction): void {
  const queryField = nulField(req.query);
  if (queryField !== null) return send(res, DomainError.validation(queryField || 'query', 'must not contain NUL characters'));
  if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(req.method) || !hasBody(req)) {
    // A body where no route reads one (a GET with a body): discarded as it comes, so that bytes
    // left unread cannot cut the answer short when the connection closes.
    if (hasBody(req)) req.resume();
    return next();
  }
  if (!req.is(['application/json', 'application/*+json'])) {
    // Drain nothing: answer at once, and close so the unread body is not parsed as the next request.
    res.setHeader('Connection', 'close');
    return send(res, new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be application/json'));
  }
  parseJson(req, res, (error?: unknown) => {
    if (error) {
      if ((error as { type?: string }).type === 'entity.too.large') res.setHeader('Connection', 'close');
      if ((error as { type?: string }).type === TOO_DEEP) {
        return send(res, DomainError.validation('body', `must not nest objects and arrays more than ${MAX_JSON_DEPTH} deep`));
      }
      return send(res, error);
    }
    const field = nulField(req.body);
    if (field !== null) return send(res, DomainError.validation(field || 'body', 'must not contain NUL characters'));
    next();
  });
}

/**
 * The dotted path of the first string holding U+0000, or null. PostgreSQL text cannot store
 * NUL, so such input is refused as invalid before it reaches a query.
 */
export function nulField(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const found = nulField(child, path ? `${path}.${key}` : key);
      if (found !== null) return found;
    }
  }
  return null;
}
