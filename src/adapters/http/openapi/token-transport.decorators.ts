import { applyDecorators } from '@nestjs/common';
import { ApiHeader, ApiParam, ApiParamOptions } from '@nestjs/swagger';

const TRANSPORT_HEADER = ApiHeader({
  name: 'X-Refresh-Token-Transport',
  required: false,
  enum: ['cookie'],
  description:
    '`cookie`: the refresh token is set as the HttpOnly cookie `__Host-refresh-<realmId>` instead of being returned in the body, ' +
    'and a request without `refreshToken` in its body reads that cookie. The cookie is read only with this header and, when the ' +
    'request has an `Origin`, from the service’s own origin or one of `CORS_ORIGINS` (else 403 FORBIDDEN).',
});

const REFRESH_COOKIE = ApiParam({
  name: '__Host-refresh-default',
  in: 'cookie',
  required: false,
  schema: { type: 'string' },
  description:
    'The refresh token, when the body has none and `X-Refresh-Token-Transport: cookie` is sent. The cookie is named ' +
    '`__Host-refresh-<realmId>` (`__Host-refresh-default` in the default realm).',
} as ApiParamOptions);

/** The `Set-Cookie` of a response that delivers a refresh token in a cookie. */
export const SET_REFRESH_COOKIE = {
  'Set-Cookie': {
    description:
      'With `X-Refresh-Token-Transport: cookie`: `__Host-refresh-<realmId>=<token>; Path=/; HttpOnly; Secure; SameSite=Strict; ' +
      'Max-Age=<seconds until the session’s absolute end>`, and the session hint `__Host-session-<realmId>=1` with the same ' +
      'attributes but not HttpOnly (no secret in it: a page reads it to know a session may exist without a request)',
    schema: { type: 'string' },
  },
};

/** The `Set-Cookie` of a response that ends the cookie (logout). */
export const CLEAR_REFRESH_COOKIE = {
  'Set-Cookie': {
    description:
      '`__Host-refresh-<realmId>=; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=0` and `__Host-session-<realmId>=; Path=/; ' +
      'Secure; SameSite=Strict; Max-Age=0`: the browser drops the cookie and the session hint',
    schema: { type: 'string' },
  },
};

/** A route that may deliver the refresh token in a cookie (login, MFA verify). */
export const IssuesRefreshCookie = () => applyDecorators(TRANSPORT_HEADER);

/** A route that may read the refresh token from its cookie (refresh, logout). */
export const ReadsRefreshCookie = () => applyDecorators(TRANSPORT_HEADER, REFRESH_COOKIE);

const DPOP_PROOF = {
  binds:
    'A DPoP proof (RFC 9449: typ dpop+jwt, ES256 or EdDSA, the public jwk in its header, claims htm, htu, iat, jti). ' +
    'With a valid one the new session is bound to the proof’s key: `tokenType` is `DPoP`, the access token carries ' +
    '`cnf.jkt`, and refreshing, logging out and calling the API then need proofs by that key. An invalid one → 401 INVALID_DPOP_PROOF.',
  bound:
    'A DPoP proof by the key the session is bound to; required for a bound session (else 401 INVALID_DPOP_PROOF, and the ' +
    'refresh token is not spent), ignored for an unbound one.',
};

/** A route that reads a `DPoP` proof: `binds` a new session to its key, or checks the `bound` session's key. */
export const AcceptsDpopProof = (use: keyof typeof DPOP_PROOF) =>
  applyDecorators(ApiHeader({ name: 'DPoP', required: false, schema: { type: 'string' }, description: DPOP_PROOF[use] }));
