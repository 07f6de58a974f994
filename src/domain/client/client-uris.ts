import { DomainError } from '../errors';

const MAX_URI_LENGTH = 2048;
/** The loopback addresses a native app listens on (RFC 8252 §7.3); `localhost` is not one (§8.3). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);
/** A URI scheme (RFC 3986 §3.1). */
const SCHEME = /^[a-z][a-z0-9+.-]*$/;

/** Whether an absolute URL names a loopback address: `127.0.0.1` or `[::1]`. */
export function isLoopback(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname);
}

function parse(raw: string, field: string): URL {
  if (raw.length > MAX_URI_LENGTH) throw DomainError.validation(field, `must be at most ${MAX_URI_LENGTH} characters`);
  if (raw.includes('#')) throw DomainError.validation(field, 'must not contain a fragment');
  if (/[\s\p{Cc}]/u.test(raw)) throw DomainError.validation(field, 'must not contain spaces or control characters');
  try {
    return new URL(raw);
  } catch {
    throw DomainError.validation(field, 'must be an absolute URI');
  }
}

/**
 * A URI a browser is sent to after sign-in or logout: absolute, without a
 * fragment or credentials, and `https`, `http` on a loopback address (a native app's local
 * listener, RFC 8252 §7.3), or a private-use scheme containing a dot (`com.example.app:/callback`,
 * RFC 8252 §7.1). Kept exactly as written, since the authorization request must name it character
 * for character.
 * @throws DomainError VALIDATION_FAILED naming `field`
 */
export function assertRedirectUri(raw: string, field: string): string {
  const url = parse(raw, field);
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'https' || scheme === 'http') {
    if (scheme === 'http' && !isLoopback(url)) {
      throw DomainError.validation(field, 'must use https, or http on a loopback address (127.0.0.1 or [::1])');
    }
    if (url.username || url.password) throw DomainError.validation(field, 'must not contain credentials');
    return raw;
  }
  if (!SCHEME.test(scheme) || !scheme.includes('.')) {
    throw DomainError.validation(field, 'must use https, http on a loopback address, or a private-use scheme containing a dot');
  }
  if (url.username || url.password) throw DomainError.validation(field, 'must not contain credentials');
  return raw;
}

/**
 * An API's identifier (RFC 8707 `resource`, the `aud` of its tokens): an absolute `https` URI,
 * or `http` on a loopback address, without a fragment or credentials. Kept as written.
 * @throws DomainError VALIDATION_FAILED (field `identifier`)
 */
export function assertResourceIdentifier(raw: string): string {
  const field = 'identifier';
  const url = parse(raw, field);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url))) {
    throw DomainError.validation(field, 'must be an https URI, or http on a loopback address (127.0.0.1 or [::1])');
  }
  if (url.username || url.password) throw DomainError.validation(field, 'must not contain credentials');
  return raw;
}
