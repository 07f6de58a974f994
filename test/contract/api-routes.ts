import { DomainErrorCode } from '../../src/domain/errors';

/**
 * Every route of the API (auth, admin and operations), with its success status and the error
 * codes the contract names for it. Paths in OpenAPI form. The OpenAPI document must describe
 * each one (test/contract/openapi.spec.ts).
 */
export interface ContractRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  status: number;
  auth: 'public' | 'bearer';
  errors: DomainErrorCode[];
}

const AUTH = '/api/v1/auth';
const ADMIN = '/v1/admin';
const TOKEN: DomainErrorCode[] = ['INVALID_TOKEN', 'TOKEN_EXPIRED'];
const ADMIN_ERRORS: DomainErrorCode[] = [...TOKEN, 'FORBIDDEN', 'VALIDATION_FAILED', 'REALM_NOT_FOUND'];

const route = (
  method: ContractRoute['method'],
  path: string,
  status: number,
  auth: ContractRoute['auth'],
  errors: DomainErrorCode[] = [],
): ContractRoute => ({
  method,
  path,
  status,
  auth,
  errors: auth === 'bearer' ? [...new Set([...TOKEN, ...errors])] : errors,
});

export const CONTRACT_ROUTES: ContractRoute[] = [
  // the auth API
  route('post', `${AUTH}/register`, 201, 'public', [
    'EMAIL_ALREADY_REGISTERED',
    'REGISTRATION_DISABLED',
    'REALM_DISABLED',
    'VALIDATION_FAILED',
    'REALM_NOT_FOUND',
    'RATE_LIMITED',
    'HOOK_DENIED',
    'HOOK_FAILED',
  ]),
  route('post', `${AUTH}/login`, 200, 'public', [
    'INVALID_CREDENTIALS',
    'ACCOUNT_SUSPENDED',
    'ACCOUNT_LOCKED',
    'EMAIL_NOT_VERIFIED',
    'REALM_DISABLED',
    'VALIDATION_FAILED',
    'RATE_LIMITED',
    'HOOK_DENIED',
    'HOOK_FAILED',
  ]),
  route('post', `${AUTH}/refresh`, 200, 'public', [
    'INVALID_TOKEN',
    'MFA_REQUIRED',
    'REAUTHENTICATION_REQUIRED',
    'VALIDATION_FAILED',
    'RATE_LIMITED',
    'HOOK_FAILED',
  ]),
  route('post', `${AUTH}/logout`, 200, 'public', ['INVALID_TOKEN']),
  route('post', `${AUTH}/mfa/verify`, 200, 'public', ['INVALID_MFA_CODE', 'INVALID_TOKEN', 'TOKEN_EXPIRED', 'RATE_LIMITED', 'HOOK_FAILED']),
  route('post', `${AUTH}/mfa/webauthn/options`, 200, 'public', ['INVALID_TOKEN']),
  // the auth API
  route('post', `${AUTH}/verify-email`, 200, 'public', ['INVALID_VERIFICATION_TOKEN', 'INVALID_USER_STATE']),
  route('post', `${AUTH}/verify-email/resend`, 202, 'public', ['RATE_LIMITED']),
  route('post', `${AUTH}/password/forgot`, 202, 'public', ['RATE_LIMITED']),
  route('post', `${AUTH}/password/reset`, 200, 'public', ['INVALID_VERIFICATION_TOKEN', 'VALIDATION_FAILED']),
  route('post', `${AUTH}/password/change`, 200, 'bearer', ['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED', 'VALIDATION_FAILED']),
  route('get', `${AUTH}/me`, 200, 'bearer', ['REALM_DISABLED']),
  route('patch', `${AUTH}/me`, 200, 'bearer', ['VALIDATION_FAILED']),
  route('get', `${AUTH}/sessions`, 200, 'bearer'),
  route('delete', `${AUTH}/sessions/{id}`, 200, 'bearer', ['SESSION_NOT_FOUND']),
  route('delete', `${AUTH}/sessions`, 200, 'bearer'),
  route('get', `${AUTH}/mfa`, 200, 'bearer'),
  route('post', `${AUTH}/mfa/totp/setup`, 200, 'bearer'),
  route('post', `${AUTH}/mfa/totp/confirm`, 200, 'bearer', ['VALIDATION_FAILED']),
  route('delete', `${AUTH}/mfa/totp`, 200, 'bearer', ['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED']),
  route('post', `${AUTH}/mfa/webauthn/register/options`, 200, 'bearer'),
  route('post', `${AUTH}/mfa/webauthn/register/verify`, 200, 'bearer'),
  route('delete', `${AUTH}/mfa/webauthn/{credentialId}`, 200, 'bearer', ['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED']),
  route('post', `${AUTH}/mfa/recovery-codes`, 200, 'bearer', ['INVALID_CREDENTIALS', 'ACCOUNT_LOCKED']),
  route('post', `${AUTH}/passkeys/options`, 200, 'public'),
  route('post', `${AUTH}/passkeys/verify`, 200, 'public', [
    'INVALID_CREDENTIALS',
    'ACCOUNT_SUSPENDED',
    'ACCOUNT_LOCKED',
    'VALIDATION_FAILED',
    'RATE_LIMITED',
    'HOOK_DENIED',
    'HOOK_FAILED',
  ]),
  route('post', `${AUTH}/email-code`, 202, 'public', ['VALIDATION_FAILED', 'RATE_LIMITED']),
  route('post', `${AUTH}/email-code/verify`, 200, 'public', [
    'INVALID_CREDENTIALS',
    'ACCOUNT_SUSPENDED',
    'ACCOUNT_LOCKED',
    'VALIDATION_FAILED',
    'RATE_LIMITED',
    'HOOK_DENIED',
    'HOOK_FAILED',
  ]),
  route('get', `${AUTH}/providers`, 200, 'public'),
  route('post', `${AUTH}/federation/{alias}/start`, 200, 'public', ['IDENTITY_PROVIDER_NOT_FOUND', 'VALIDATION_FAILED', 'RATE_LIMITED']),
  route('get', `${AUTH}/federation/{alias}/callback`, 303, 'public', ['INVALID_VERIFICATION_TOKEN', 'RATE_LIMITED']),
  route('post', `${AUTH}/federation/exchange`, 200, 'public', [
    'INVALID_TOKEN',
    'ACCOUNT_SUSPENDED',
    'ACCOUNT_LOCKED',
    'EMAIL_NOT_VERIFIED',
    'INVALID_DPOP_PROOF',
    'RATE_LIMITED',
    'HOOK_DENIED',
    'HOOK_FAILED',
  ]),
  route('post', `${AUTH}/federation/link`, 200, 'bearer', ['INVALID_TOKEN', 'INVALID_USER_STATE', 'FORBIDDEN', 'VALIDATION_FAILED']),
  route('get', `${AUTH}/identities`, 200, 'bearer'),
  route('delete', `${AUTH}/identities/{id}`, 200, 'bearer', ['NOT_FOUND', 'INVALID_USER_STATE']),
  route('get', `${AUTH}/apps`, 200, 'bearer'),
  route('delete', `${AUTH}/apps/{clientId}`, 200, 'bearer', ['CLIENT_NOT_FOUND']),
  route('get', '/.well-known/jwks.json', 200, 'public'),
  // the admin API
  route('get', `${ADMIN}/users`, 200, 'bearer', ADMIN_ERRORS),
  route('post', `${ADMIN}/users`, 201, 'bearer', [...ADMIN_ERRORS, 'EMAIL_ALREADY_REGISTERED']),
  route('get', `${ADMIN}/users/{id}`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND']),
  route('delete', `${ADMIN}/users/{id}`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND']),
  route('post', `${ADMIN}/users/{id}/suspend`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND', 'INVALID_USER_STATE']),
  route('post', `${ADMIN}/users/{id}/activate`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND', 'INVALID_USER_STATE']),
  route('post', `${ADMIN}/users/{id}/unlock`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND', 'INVALID_USER_STATE']),
  route('post', `${ADMIN}/users/{id}/reset-password`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND']),
  route('post', `${ADMIN}/users/{id}/mfa/reset`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND']),
  route('put', `${ADMIN}/users/{id}/roles`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND']),
  route('put', `${ADMIN}/users/{id}/app-metadata`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND']),
  route('get', `${ADMIN}/roles`, 200, 'bearer', ADMIN_ERRORS),
  route('post', `${ADMIN}/roles`, 201, 'bearer', [...ADMIN_ERRORS, 'ROLE_EXISTS']),
  route('delete', `${ADMIN}/roles/{name}`, 200, 'bearer', [...ADMIN_ERRORS, 'ROLE_NOT_FOUND', 'INVALID_USER_STATE']),
  route('delete', `${ADMIN}/users/{id}/identities/{identityId}`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND', 'NOT_FOUND']),
  route('get', `${ADMIN}/sessions`, 200, 'bearer', ADMIN_ERRORS),
  route('delete', `${ADMIN}/sessions/{id}`, 200, 'bearer', [...ADMIN_ERRORS, 'SESSION_NOT_FOUND']),
  route('get', `${ADMIN}/users/{id}/sessions`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND']),
  route('delete', `${ADMIN}/users/{id}/sessions`, 200, 'bearer', [...ADMIN_ERRORS, 'USER_NOT_FOUND']),
  route('get', `${ADMIN}/events`, 200, 'bearer', ADMIN_ERRORS),
  route('get', `${ADMIN}/realms`, 200, 'bearer', ADMIN_ERRORS),
  route('post', `${ADMIN}/realms`, 201, 'bearer', ADMIN_ERRORS),
  route('post', `${ADMIN}/webhooks`, 201, 'bearer', ADMIN_ERRORS),
  route('get', `${ADMIN}/webhooks`, 200, 'bearer', ADMIN_ERRORS),
  route('get', `${ADMIN}/webhooks/{id}`, 200, 'bearer', [...ADMIN_ERRORS, 'WEBHOOK_NOT_FOUND']),
  route('patch', `${ADMIN}/webhooks/{id}`, 200, 'bearer', [...ADMIN_ERRORS, 'WEBHOOK_NOT_FOUND']),
  route('delete', `${ADMIN}/webhooks/{id}`, 200, 'bearer', [...ADMIN_ERRORS, 'WEBHOOK_NOT_FOUND']),
  route('post', `${ADMIN}/webhooks/{id}/rotate-secret`, 200, 'bearer', [...ADMIN_ERRORS, 'WEBHOOK_NOT_FOUND']),
  route('get', `${ADMIN}/webhooks/{id}/deliveries`, 200, 'bearer', [...ADMIN_ERRORS, 'WEBHOOK_NOT_FOUND']),
  route('post', `${ADMIN}/webhooks/{id}/deliveries/{deliveryId}/retry`, 202, 'bearer', [...ADMIN_ERRORS, 'WEBHOOK_NOT_FOUND', 'NOT_FOUND']),
  route('post', `${ADMIN}/identity-providers`, 201, 'bearer', [...ADMIN_ERRORS, 'IDENTITY_PROVIDER_EXISTS']),
  route('get', `${ADMIN}/identity-providers`, 200, 'bearer', ADMIN_ERRORS),
  route('get', `${ADMIN}/identity-providers/{alias}`, 200, 'bearer', [...ADMIN_ERRORS, 'IDENTITY_PROVIDER_NOT_FOUND']),
  route('patch', `${ADMIN}/identity-providers/{alias}`, 200, 'bearer', [...ADMIN_ERRORS, 'IDENTITY_PROVIDER_NOT_FOUND']),
  route('delete', `${ADMIN}/identity-providers/{alias}`, 200, 'bearer', [...ADMIN_ERRORS, 'IDENTITY_PROVIDER_NOT_FOUND']),
  route('get', `${ADMIN}/clients`, 200, 'bearer', ADMIN_ERRORS),
  route('post', `${ADMIN}/clients`, 201, 'bearer', ADMIN_ERRORS),
  route('get', `${ADMIN}/clients/{clientId}`, 200, 'bearer', [...ADMIN_ERRORS, 'CLIENT_NOT_FOUND']),
  route('patch', `${ADMIN}/clients/{clientId}`, 200, 'bearer', [...ADMIN_ERRORS, 'CLIENT_NOT_FOUND']),
  route('delete', `${ADMIN}/clients/{clientId}`, 200, 'bearer', [...ADMIN_ERRORS, 'CLIENT_NOT_FOUND']),
  route('post', `${ADMIN}/clients/{clientId}/rotate-secret`, 200, 'bearer', [...ADMIN_ERRORS, 'CLIENT_NOT_FOUND']),
  route('get', `${ADMIN}/resources`, 200, 'bearer', ADMIN_ERRORS),
  route('post', `${ADMIN}/resources`, 201, 'bearer', [...ADMIN_ERRORS, 'RESOURCE_EXISTS']),
  route('patch', `${ADMIN}/resources/{id}`, 200, 'bearer', [...ADMIN_ERRORS, 'RESOURCE_NOT_FOUND']),
  route('delete', `${ADMIN}/resources/{id}`, 200, 'bearer', [...ADMIN_ERRORS, 'RESOURCE_NOT_FOUND']),
  route('post', `${ADMIN}/initial-access-tokens`, 201, 'bearer', ADMIN_ERRORS),
  route('get', `${ADMIN}/hooks`, 200, 'bearer', ADMIN_ERRORS),
  route('put', `${ADMIN}/hooks/{name}`, 200, 'bearer', [...ADMIN_ERRORS, 'NOT_FOUND']),
  route('delete', `${ADMIN}/hooks/{name}`, 200, 'bearer', [...ADMIN_ERRORS, 'NOT_FOUND']),
  route('post', `${ADMIN}/hooks/{name}/rotate-secret`, 200, 'bearer', [...ADMIN_ERRORS, 'NOT_FOUND']),
  route('get', `${ADMIN}/realm`, 200, 'bearer', ADMIN_ERRORS),
  route('patch', `${ADMIN}/realm`, 200, 'bearer', ADMIN_ERRORS),
  // the operations rules
  route('get', '/health/live', 200, 'public'),
  route('get', '/health/ready', 200, 'public'),
  route('get', '/metrics', 200, 'public'),
];
