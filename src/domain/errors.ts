/** Every error code. */
export type DomainErrorCode =
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
  | 'CLIENT_NOT_FOUND'
  | 'EMAIL_ALREADY_REGISTERED'
  | 'INVALID_USER_STATE'
  | 'ROLE_EXISTS'
  | 'IDENTITY_PROVIDER_NOT_FOUND'
  | 'IDENTITY_PROVIDER_EXISTS'
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

export interface FieldError {
  field: string;
  message: string;
}

export interface DomainErrorMeta {
  /** Validation details, rendered as `error.details`. */
  details?: FieldError[];
  /** Rendered as `error.mfaToken` on MFA_REQUIRED. */
  mfaToken?: string;
  /** Rendered as the `Retry-After` header, in seconds. */
  retryAfterSeconds?: number;
}

/** The one error type of the service; the HTTP adapter maps `code` to a status. */
export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly meta: DomainErrorMeta = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }

  static validation(field: string, message: string): DomainError {
    return new DomainError('VALIDATION_FAILED', `${field} ${message}`, { details: [{ field, message }] });
  }
}
