export {
  AccessTokenError,
  createAccessTokenVerifier,
  DPOP_ALGS,
  KeysUnavailableError,
  type AccessTokenErrorCode,
  type AccessTokenVerifier,
  type AccessTokenVerifierOptions,
  type TokenRequest,
  type VerifiedAccessToken,
} from './verifier.js';
export {
  requestUrl,
  requireAccessToken,
  requireOrganizationRole,
  requireRole,
  type AccessTokenMiddlewareOptions,
  type RequestLike,
  type ResponseLike,
} from './express.js';
export { MemoryReplayCache, type ReplayCache } from './replay-cache.js';
export {
  protectedResource,
  PROTECTED_RESOURCE_METADATA_PATH,
  type ProtectedResource,
  type ProtectedResourceOptions,
} from './protected-resource.js';
