import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { RequestHandler } from 'express';
import { hostname } from 'node:os';
import { pino, DestinationStream, Logger, LoggerOptions } from 'pino';
import { AppConfig } from '../../../config/app-config';
import { AppRequest, clientIp } from '../request-context';

/**
 * Fields that may hold a credential, wherever a log call puts them. Request and response bodies
 * are never logged; this is the second line of defence for objects handed to a logger by hand.
 */
const SECRET_FIELDS = [
  'password',
  'currentPassword',
  'newPassword',
  'passwordHash',
  'token',
  'accessToken',
  'refreshToken',
  'mfaToken',
  'code',
  'secret',
  'clientSecret',
  'initialAccessToken',
  'otpauthUrl',
  'qrCode',
  'recoveryCodes',
  'deviceFingerprint',
  'privateKey',
  'authorization',
  'cookie',
];

export const REDACTED_PATHS = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  ...SECRET_FIELDS.map((field) => `*.*.${field}`),
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-device-fingerprint"]',
  'req.headers.dpop',
  'res.headers["set-cookie"]',
];

/** Only the path: query strings are dropped, since a careless client may put a token there. */
function pathOf(req: IncomingMessage): string {
  const url = (req as AppRequest).originalUrl ?? req.url ?? '';
  const end = url.indexOf('?');
  return end === -1 ? url : url.slice(0, end);
}

/** Errors keep their type, message, code and stack; driver errors lose their SQL and parameters. */
export function serializeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.constructor?.name ?? error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    stack: error.stack,
  };
}

/** The id of the request being handled, for every log line written while handling it. */
const requestScope = new AsyncLocalStorage<string>();

/** pino options shared by the request logs and every other log line of the process. */
export function loggerOptions(config: Pick<AppConfig, 'logLevel'>): LoggerOptions {
  return {
    level: config.logLevel,
    base: { service: 'identity-service', hostname: hostname(), pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
    // Evaluated only for lines that are written: no per-request child logger is built (a child of a
    // redacting logger costs microseconds per request, also for requests that log nothing).
    mixin: () => {
      const requestId = requestScope.getStore();
      return requestId === undefined ? {} : { requestId };
    },
    serializers: {
      req: (req: { raw?: IncomingMessage; method?: string }) => {
        const raw = req.raw ?? (req as unknown as IncomingMessage);
        return { method: raw.method, path: pathOf(raw), ip: clientIp(raw as AppRequest) };
      },
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
      err: serializeError,
    },
  };
}

/** The root logger of the process, writing JSON lines to `destination`. */
export function createRootLogger(config: Pick<AppConfig, 'logLevel'>, destination: DestinationStream): Logger {
  return pino(loggerOptions(config), destination);
}

/**
 * The access log: one line per request when its response is finished (or the client went away),
 * with the request id, method, path, realm, matched route, user, status and duration. Bodies are
 * never logged. Log lines written while the request is handled carry the same `requestId`.
 * Successes are logged at `info`, answers ≥ 500 at `error`; below the configured level a request
 * costs one listener and a clock read.
 */
export function createAccessLog(root: Logger): RequestHandler {
  return (req, res, next) => {
    const request = req as unknown as AppRequest;
    const started = performance.now();
    // A response emits 'close' exactly once: after 'finish', or when the client went away first.
    res.on('close', () => {
      const failed = res.statusCode >= 500;
      if (!root.isLevelEnabled(failed ? 'error' : 'info')) return;
      // The client went away before the answer was sent: the status is only what was planned.
      const aborted = !res.writableFinished;
      const line = {
        requestId: request.requestId,
        realm: request.realm?.id,
        route: (request.route as { path?: string } | undefined)?.path,
        userId: request.principal?.sub,
        req, // the root logger's serializers keep method, path and address,
        res, // and the status
        durationMs: Math.round(performance.now() - started),
        ...(aborted ? { aborted } : {}),
      };
      if (failed) root.error(line, 'request failed');
      else root.info(line, aborted ? 'request aborted' : 'request completed');
    });
    requestScope.run(request.requestId, next);
  };
}
