import { requestUrl, type RequestLike, type ResponseLike } from './express.js';
import {
  AccessTokenError,
  createAccessTokenVerifier,
  KeysUnavailableError,
  type AccessTokenVerifier,
  type AccessTokenVerifierOptions,
} from './verifier.js';

/** Where RFC 9728 puts a protected resource's metadata. */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
const PROOF_ALGORITHMS = ['ES256', 'EdDSA'];

export interface ProtectedResourceOptions {
  /** The realm's issuer, `{JWT_ISSUER}/realms/{realmId}`: the authorization server the metadata names. */
  issuer: string;
  /**
   * This API's resource identifier, as registered with `POST /v1/admin/resources` (RFC 8707): the
   * `aud` every token must carry, and the metadata's `resource`. MCP clients want the URL they
   * call (e.g. `https://api.example.com/mcp`) or a prefix of it on the same origin.
   */
  resource: string;
  /** Scopes every protected request needs, all of them (default none). `protect(...)` adds more. */
  scopes?: string[];
  /** The metadata's `scopes_supported` (default: `scopes`). */
  scopesSupported?: string[];
  /** A human-readable name for the metadata's `resource_name`. */
  resourceName?: string;
  /**
   * The origin clients call this API at (scheme, host, port), for the metadata URL in challenges
   * and the URL DPoP proofs name. Default: the request's (`req.protocol` and the Host header).
   */
  publicOrigin?: string;
  /** Options of the verifier created here (its issuer and audience are the ones above). */
  verifierOptions?: Omit<AccessTokenVerifierOptions, 'issuer' | 'audience'>;
  /** A verifier of your own instead; it must check the audience (`audience: resource`). */
  verifier?: AccessTokenVerifier;
}

type Middleware = (req: RequestLike, res: ResponseLike, next: (error?: unknown) => void) => void;

/** An API protected as an OAuth 2.0 resource server of one realm. */
export interface ProtectedResource {
  /**
   * Express middleware (mount it at the root, `app.use(api.metadata)`): answers `GET` (and
   * `HEAD`) of `/.well-known/oauth-protected-resource` and of the same path followed by the
   * resource identifier's path (RFC 9728 §3.1) with the metadata document; passes on the rest.
   */
  metadata: Middleware;
  /**
   * Express middleware requiring a token for this resource holding the options' `scopes` and
   * `scopes` given here. No token → 401 `WWW-Authenticate: Bearer resource_metadata="…"`; a token
   * refused (signature, issuer, realm, expiry, audience, DPoP proof) → 401 with
   * `error="invalid_token"` (or `DPoP error="invalid_dpop_proof"`); a scope missing → 403
   * `Bearer error="insufficient_scope", scope="…"`; keys unavailable → 503. On success
   * `req.accessToken` holds the checked token.
   */
  protect(...scopes: string[]): Middleware;
  /** The metadata document (RFC 9728 §2). */
  document(): Record<string, unknown>;
  /** The URL of the metadata document, as challenges name it, for a request (or the public origin). */
  metadataUrl(req?: RequestLike): string;
}

/**
 * Protects an API as an OAuth resource server (RFC 9728 metadata, RFC 6750 challenges, audience,
 * scopes, DPoP) in one call:
 *
 * ```ts
 * const api = protectedResource({ issuer, resource: 'https://api.example.com/mcp', scopes: ['tools:call'] });
 * app.use(api.metadata);
 * app.post('/mcp', api.protect(), handler);
 * ```
 */
export function protectedResource(options: ProtectedResourceOptions): ProtectedResource {
  const { issuer, resource } = options;
  if (!issuer) throw new TypeError('issuer is required');
  if (!resource || !URL.canParse(resource)) throw new TypeError('resource must be an absolute URI');
  const required = options.scopes ?? [];
  for (const scope of [...required, ...(options.scopesSupported ?? [])]) checkScope(scope);
  const verifier = options.verifier ?? createAccessTokenVerifier({ ...options.verifierOptions, issuer, audience: resource });
  const resourceUrl = new URL(resource);
  const resourcePath = resourceUrl.pathname.replace(/\/+$/, '');
  const metadataPaths = new Set([PROTECTED_RESOURCE_METADATA_PATH, `${PROTECTED_RESOURCE_METADATA_PATH}${resourcePath}`]);

  const document = (): Record<string, unknown> => ({
    resource,
    authorization_servers: [issuer],
    scopes_supported: options.scopesSupported ?? required,
    bearer_methods_supported: ['header'],
    dpop_signing_alg_values_supported: PROOF_ALGORITHMS,
    ...(options.resourceName ? { resource_name: options.resourceName } : {}),
  });

  const metadataUrl = (req?: RequestLike): string => {
    const origin = options.publicOrigin ?? (req ? new URL(requestUrl(req)).origin : resourceUrl.origin);
    return `${origin.replace(/\/+$/, '')}${PROTECTED_RESOURCE_METADATA_PATH}${resourcePath}`;
  };

  const metadata: Middleware = (req, res, next) => {
    const path = (req.originalUrl ?? req.url ?? '/').split('?')[0];
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !metadataPaths.has(path)) return next();
    const body = JSON.stringify(document());
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Cache-Control', 'public, max-age=300');
    // Public metadata: browser-based clients read it from other origins.
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.end(req.method === 'HEAD' ? '' : body);
  };

  const protect = (...extra: string[]): Middleware => {
    extra.forEach(checkScope);
    const needed = [...new Set([...required, ...extra])];
    return (req, res, next) => {
      const where = `resource_metadata="${metadataUrl(req)}"`;
      verifier
        .verify({
          authorization: req.headers.authorization,
          dpop: req.headers.dpop,
          method: req.method,
          url: requestUrl(req, options.publicOrigin),
        })
        .then((token) => {
          const missing = needed.filter((scope) => !token.scopes.includes(scope));
          if (missing.length > 0) {
            const scope = needed.join(' ');
            const description = `This requires the scope ${missing.map((s) => `"${s}"`).join(' and ')}`;
            return refuse(res, 403, `${token.scheme} error="insufficient_scope", scope="${scope}", ${where}`, {
              error: 'insufficient_scope',
              error_description: description,
              scope,
            });
          }
          req.accessToken = token;
          next();
        })
        .catch((error: unknown) => {
          if (error instanceof KeysUnavailableError) {
            res.setHeader('Retry-After', '5');
            return refuse(res, 503, undefined, {
              error: 'temporarily_unavailable',
              error_description: 'The access token cannot be checked now',
            });
          }
          if (!(error instanceof AccessTokenError)) return next(error);
          const algs = `algs="${PROOF_ALGORITHMS.join(' ')}"`;
          const challenge =
            error.code === 'missing_token'
              ? `Bearer ${where}, DPoP ${algs}`
              : error.scheme === 'Bearer'
                ? `Bearer error="invalid_token", error_description="${error.message}", ${where}`
                : `DPoP error="${error.code}", error_description="${error.message}", ${algs}, ${where}`;
          refuse(res, 401, challenge, { error: error.code, error_description: error.message });
        })
        .catch(next);
    };
  };

  return { metadata, protect, document, metadataUrl };
}

function refuse(res: ResponseLike, status: number, challenge: string | undefined, body: Record<string, string>): void {
  res.statusCode = status;
  if (challenge) res.setHeader('WWW-Authenticate', challenge);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

/** Scope tokens (RFC 6749 §3.3) without quotes or spaces, so they fit in a challenge. */
function checkScope(scope: string): void {
  if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope)) throw new TypeError(`"${scope}" is not a scope name`);
}
