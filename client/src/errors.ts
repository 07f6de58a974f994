/** Error codes the service answers with. */
export type ApiErrorCode =
  | 'VALIDATION_FAILED'
  | 'INVALID_VERIFICATION_TOKEN'
  | 'INVALID_CREDENTIALS'
  | 'TOKEN_EXPIRED'
  | 'INVALID_TOKEN'
  | 'MFA_REQUIRED'
  | 'REAUTHENTICATION_REQUIRED'
  | 'INVALID_MFA_CODE'
  | 'INVALID_DPOP_PROOF'
  | 'FORBIDDEN'
  | 'ACCOUNT_SUSPENDED'
  | 'REGISTRATION_DISABLED'
  | 'EMAIL_NOT_VERIFIED'
  | 'REALM_DISABLED'
  | 'SSO_REQUIRED'
  | 'NOT_FOUND'
  | 'REALM_NOT_FOUND'
  | 'USER_NOT_FOUND'
  | 'SESSION_NOT_FOUND'
  | 'WEBHOOK_NOT_FOUND'
  | 'ROLE_NOT_FOUND'
  | 'EMAIL_ALREADY_REGISTERED'
  | 'INVALID_USER_STATE'
  | 'ROLE_EXISTS'
  | 'IDENTITY_PROVIDER_NOT_FOUND'
  | 'IDENTITY_PROVIDER_EXISTS'
  | 'CLIENT_NOT_FOUND'
  | 'RESOURCE_NOT_FOUND'
  | 'RESOURCE_EXISTS'
  | 'ORGANIZATION_NOT_FOUND'
  | 'ORGANIZATION_EXISTS'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'ACCOUNT_LOCKED'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  | 'SERVICE_UNAVAILABLE'
  | 'HOOK_DENIED'
  | 'HOOK_FAILED';

/**
 * Failures found on the client's side, with `status` 0:
 * - `NETWORK_ERROR`: the request did not get an answer, or the answer was not the service's JSON;
 * - `NOT_SIGNED_IN`: an authenticated call without a session (or with a step-up pending);
 * - `WEBAUTHN_FAILED`: the browser's WebAuthn ceremony was cancelled or failed (`cause` holds why);
 * - `EMAIL_LINK_OTHER_BROWSER`: a sign-in link opened in a browser that did not ask for it (nothing
 *   was sent: the link stays usable where it was asked for, and the emailed code works anywhere);
 * - `FEDERATION_NOT_STARTED_HERE`: a return from an identity provider to a browser tab that did not
 *   start the sign-in (it keeps the code verifier): nothing was sent; start again.
 */
export type ClientErrorCode =
  'NETWORK_ERROR' | 'NOT_SIGNED_IN' | 'WEBAUTHN_FAILED' | 'EMAIL_LINK_OTHER_BROWSER' | 'FEDERATION_NOT_STARTED_HERE';

/**
 * Why a sign-in or link at an identity provider failed: the callback's `error=` value in capitals,
 * with `status` 0 and the service's `error_description` as the message.
 * - `ACCESS_DENIED`: the user cancelled at the provider (or the provider refused);
 * - `PROVIDER_ERROR`: the provider could not be reached, or its answer could not be trusted;
 * - `EMAIL_REQUIRED`: the provider gave no email address;
 * - `EMAIL_ALREADY_REGISTERED`: an account has the address and the provider does not vouch for it:
 *   sign in to that account and link the provider from there;
 * - `REGISTRATION_DISABLED`: no account has the address and the realm's registration is closed;
 * - `IDENTITY_IN_USE`: the provider's account is linked to another user;
 * - `REALM_DISABLED`: the realm is disabled;
 * - `HOOK_DENIED`: the realm's backend refused the sign-up or sign-in (the message is its own,
 *   written for the user);
 * - `HOOK_FAILED`: the realm's backend did not answer in time: try again in a moment.
 */
export type FederationErrorCode =
  | 'ACCESS_DENIED'
  | 'PROVIDER_ERROR'
  | 'EMAIL_REQUIRED'
  | 'EMAIL_ALREADY_REGISTERED'
  | 'REGISTRATION_DISABLED'
  | 'IDENTITY_IN_USE'
  | 'REALM_DISABLED'
  | 'HOOK_DENIED'
  | 'HOOK_FAILED';

/** The `error=` values of an identity provider's return, as their codes. */
export const FEDERATION_ERROR_CODES: readonly FederationErrorCode[] = [
  'ACCESS_DENIED',
  'PROVIDER_ERROR',
  'EMAIL_REQUIRED',
  'EMAIL_ALREADY_REGISTERED',
  'REGISTRATION_DISABLED',
  'IDENTITY_IN_USE',
  'REALM_DISABLED',
  'HOOK_DENIED',
  'HOOK_FAILED',
];

export type ErrorCode = ApiErrorCode | ClientErrorCode | FederationErrorCode;

/** A field-level validation problem (`details` of `VALIDATION_FAILED`). */
export interface FieldError {
  field: string;
  message: string;
}

/** The one error type the client throws. */
export class IdentityError extends Error {
  override readonly name = 'IdentityError';
  readonly code: ErrorCode;
  /** HTTP status, or 0 when the failure happened on the client's side. */
  readonly status: number;
  readonly details?: FieldError[];
  /** Seconds to wait before retrying (from `Retry-After`), when the service said so. */
  readonly retryAfter?: number;
  /** The `X-Request-Id` of the answer, for support requests. */
  readonly requestId?: string;

  constructor(
    code: ErrorCode,
    message: string,
    init: { status?: number; details?: FieldError[]; retryAfter?: number; requestId?: string; cause?: unknown } = {},
  ) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = code;
    this.status = init.status ?? 0;
    if (init.details) this.details = init.details;
    if (init.retryAfter !== undefined) this.retryAfter = init.retryAfter;
    if (init.requestId) this.requestId = init.requestId;
  }
}

/** Builds the error from a service answer (the `{"error": {...}}` envelope). */
export async function errorFrom(response: Response): Promise<IdentityError & { mfaToken?: string }> {
  let body: { error?: { code?: ErrorCode; message?: string; details?: FieldError[]; mfaToken?: string } } | undefined;
  try {
    body = await response.json();
  } catch {
    // not the service's JSON (a proxy's error page): reported below as NETWORK_ERROR
  }
  const retry = Number(response.headers.get('retry-after'));
  const envelope = body?.error;
  const error: IdentityError & { mfaToken?: string } = new IdentityError(
    envelope?.code ?? 'NETWORK_ERROR',
    envelope?.message ?? `Unexpected answer (HTTP ${response.status})`,
    {
      status: response.status,
      details: envelope?.details,
      retryAfter: response.headers.has('retry-after') && Number.isFinite(retry) ? retry : undefined,
      requestId: response.headers.get('x-request-id') ?? undefined,
    },
  );
  if (envelope?.mfaToken) error.mfaToken = envelope.mfaToken;
  return error;
}
