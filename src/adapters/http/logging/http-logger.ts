import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import { pino, DestinationStream, Logger, LoggerOptions } from 'pino';
import { pinoHttp, HttpLogger, Options } from 'pino-http';
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

/** pino options shared by the request logs and every other log line of the process. */
export function loggerOptions(config: Pick<AppConfig, 'logLevel'>): LoggerOptions {
  return {
    level: config.logLevel,
    base: { service: 'identity-service', hostname: hostname(), pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
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
 * never logged. Request-scoped log lines carry the same `requestId`.
 */
export function createHttpLogger(root: Logger): HttpLogger {
  // Below the configured level a success line is 'silent': pino-http then skips the bindings and
  // child logger it would build for a line that is never written.
  const successLevel = root.isLevelEnabled('info') ? 'info' : 'silent';
  const options: Options<IncomingMessage, ServerResponse> = {
    logger: root,
    // The id set by the requestId middleware, so the X-Request-Id header and the logs agree.
    genReqId: (req) => (req as AppRequest).requestId ?? randomUUID(),
    customAttributeKeys: { reqId: 'requestId', responseTime: 'durationMs' },
    quietReqLogger: true,
    wrapSerializers: false,
    serializers: {
      req: (req: IncomingMessage) => ({ method: req.method, path: pathOf(req), ip: clientIp(req as AppRequest) }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      err: serializeError,
    },
    customProps: (req) => {
      const r = req as AppRequest;
      return { realm: r.realm?.id, route: (r.route as { path?: string } | undefined)?.path, userId: r.principal?.sub };
    },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : successLevel),
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
  };
  return pinoHttp(options);
}
