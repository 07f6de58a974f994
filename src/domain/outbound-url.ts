import { DomainError } from './errors';

/**
 * A URL the service may call out to (a webhook, an identity provider): absolute http(s) (http
 * only when allowed), no credentials, no fragment, at most 2048 characters. Address rules
 * (public only) are checked where names resolve. Returns the URL as the WHATWG parser normalises
 * it (hosts such as `2130706433` or `0x7f.1` become dotted IPv4), so the stored form is the one
 * that is checked.
 * @throws DomainError VALIDATION_FAILED naming `field`
 */
export function normaliseOutboundUrl(raw: string, allowHttp: boolean, field: string): string {
  if (raw.length > 2048) throw DomainError.validation(field, 'must be at most 2048 characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw DomainError.validation(field, 'must be an absolute URL');
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    throw DomainError.validation(field, allowHttp ? 'must use https or http' : 'must use https');
  }
  if (url.username || url.password) throw DomainError.validation(field, 'must not contain credentials');
  if (url.hash) throw DomainError.validation(field, 'must not contain a fragment');
  if (!url.hostname) throw DomainError.validation(field, 'must name a host');
  return url.toString();
}
