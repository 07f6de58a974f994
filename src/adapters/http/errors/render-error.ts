import { HttpException } from '@nestjs/common';
import { DomainError, DomainErrorCode, FieldError } from '../../../domain/errors';
import { ERROR_STATUS } from './error-status';

export interface ErrorEnvelope {
  error: { code: DomainErrorCode; message: string; status: number; details?: FieldError[]; mfaToken?: string };
}

export interface RenderedError {
  status: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
  /** Unexpected errors are logged by the caller; expected ones are not. */
  unexpected: boolean;
}

/** RFC 9449 §7.1: the DPoP challenge, with the algorithms proofs may use. */
export const DPOP_CHALLENGE = (error: 'invalid_dpop_proof' | 'invalid_token') => `DPoP error="${error}", algs="ES256 EdDSA"`;

const STATUS_CODE: Record<number, DomainErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'INVALID_TOKEN',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'NOT_FOUND',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
};

const FIXED_MESSAGE: Partial<Record<DomainErrorCode, string>> = {
  NOT_FOUND: 'Route not found',
  PAYLOAD_TOO_LARGE: 'The request body exceeds 64 KiB',
  UNSUPPORTED_MEDIA_TYPE: 'Request bodies must be application/json',
  RATE_LIMITED: 'Too many requests; retry later',
  SERVICE_UNAVAILABLE: 'The service is temporarily unavailable',
  INTERNAL_ERROR: 'An unexpected error occurred',
};

// Connection-level failures of PostgreSQL (pg codes and SQLSTATE classes 08/57) fail closed as 503.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300']);

function isUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; driverError?: { code?: unknown }; message?: unknown };
  const code = String(e?.driverError?.code ?? e?.code ?? '');
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('08')) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection is not established|Cannot use a pool after calling end/i.test(
    message,
  );
}

function envelope(code: DomainErrorCode, message: string, extra: Partial<ErrorEnvelope['error']> = {}): ErrorEnvelope {
  return { error: { code, message, status: ERROR_STATUS[code], ...extra } };
}

/** Renders any thrown value as the API's error envelope. Nothing internal leaks. */
export function renderError(error: unknown): RenderedError {
  if (error instanceof DomainError) {
    const extra: Partial<ErrorEnvelope['error']> = {};
    if (error.code === 'VALIDATION_FAILED' && error.meta.details) extra.details = error.meta.details;
    if (error.code === 'MFA_REQUIRED' && error.meta.mfaToken) extra.mfaToken = error.meta.mfaToken;
    const headers: Record<string, string> = {};
    if (error.meta.retryAfterSeconds !== undefined) headers['Retry-After'] = String(Math.ceil(error.meta.retryAfterSeconds));
    if (error.code === 'INVALID_DPOP_PROOF') headers['WWW-Authenticate'] = DPOP_CHALLENGE('invalid_dpop_proof');
    const message = error.code === 'INTERNAL_ERROR' ? FIXED_MESSAGE.INTERNAL_ERROR! : error.message;
    return { status: ERROR_STATUS[error.code], body: envelope(error.code, message, extra), headers, unexpected: false };
  }
  if (error instanceof HttpException) {
    const code = STATUS_CODE[error.getStatus()];
    if (code) {
      return {
        status: ERROR_STATUS[code],
        body: envelope(code, FIXED_MESSAGE[code] ?? 'The request is invalid'),
        headers: {},
        unexpected: false,
      };
    }
  }
  const bodyParserType = (error as { type?: unknown })?.type;
  if (bodyParserType === 'entity.too.large') {
    return { status: 413, body: envelope('PAYLOAD_TOO_LARGE', FIXED_MESSAGE.PAYLOAD_TOO_LARGE!), headers: {}, unexpected: false };
  }
  if (bodyParserType === 'entity.parse.failed') {
    return {
      status: 400,
      body: envelope('VALIDATION_FAILED', 'The request body is not valid JSON', {
        details: [{ field: 'body', message: 'must be valid JSON' }],
      }),
      headers: {},
      unexpected: false,
    };
  }
  if (bodyParserType === 'encoding.unsupported' || bodyParserType === 'charset.unsupported') {
    return {
      status: 415,
      body: envelope('UNSUPPORTED_MEDIA_TYPE', 'Unsupported content encoding or charset'),
      headers: {},
      unexpected: false,
    };
  }
  if (typeof bodyParserType === 'string' && /^request\.(aborted|size\.invalid)|^stream\./.test(bodyParserType)) {
    return { status: 400, body: envelope('VALIDATION_FAILED', 'The request body could not be read'), headers: {}, unexpected: false };
  }
  if (isUnavailable(error)) {
    return {
      status: 503,
      body: envelope('SERVICE_UNAVAILABLE', FIXED_MESSAGE.SERVICE_UNAVAILABLE!),
      headers: { 'Retry-After': '5' },
      unexpected: true,
    };
  }
  return { status: 500, body: envelope('INTERNAL_ERROR', FIXED_MESSAGE.INTERNAL_ERROR!), headers: {}, unexpected: true };
}
