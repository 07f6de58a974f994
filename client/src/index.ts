export { createIdentityClient } from './client.js';
export type { IdentityClient, IdentityClientOptions, WebAuthnBrowser } from './client.js';
export { IdentityError } from './errors.js';
export type { ApiErrorCode, ClientErrorCode, ErrorCode, FederationErrorCode, FieldError } from './errors.js';
export { collectFingerprint, FINGERPRINT_KEYS, sha256 } from './fingerprint.js';
export type { FingerprintComponents, FingerprintKey } from './fingerprint.js';
export { localStorageAdapter, memoryStorage } from './storage.js';
export type { TokenStorage } from './storage.js';
export type * from './types.js';
