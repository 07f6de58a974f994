import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { allowedReturnUrl } from '../../domain/federation/return-url';
import { Realm } from '../../domain/realm/realm';

/**
 * Where a sign-in started in a browser may send that browser back: a page of the service's own
 * account console (on `API_URL`'s origin, under `/account/`), or one of the realm's allowed return
 * URLs, matched exactly (`allowedReturnUrl`). Anything else is refused, so no link of ours is an
 * open redirect. The development profile (`npm run dev`) also accepts any page of a dev server on
 * this machine, `http://localhost:<port>/…` or `http://127.0.0.1:<port>/…`, written as a URL parser
 * writes it; production never does.
 */
@Injectable()
export class ReturnUrls {
  constructor(private readonly config: AppConfig) {}

  /**
   * The URL as given, once allowed.
   * @throws DomainError VALIDATION_FAILED (field `field`) when it is not an allowed return URL
   */
  assertAllowed(realm: Realm, returnTo: string, field = 'returnTo'): string {
    if (allowedReturnUrl(returnTo, realm.settings.allowedReturnUrls, this.config.apiUrl)) return returnTo;
    if (returnTo === providerInteractionReturn(this.config.apiUrl, realm.id, returnTo)) return returnTo;
    if (this.config.profile === 'development' && localDevServer(returnTo)) return returnTo;
    throw DomainError.validation(field, "must be one of the realm's allowed return URLs or a page of the account console");
  }
}

/**
 * The realm's OpenID provider's own sign-in page, where an identity provider's sign-in started
 * there comes back (`{API_URL}/realms/{realm}/interaction/{uid}/federation`): the URL itself
 * when it is one, else null. The page redeems the login code with a verifier it holds in the
 * interaction, so a code sent there by anyone else's start signs nobody in.
 */
export function providerInteractionReturn(apiUrl: string, realmId: string, returnTo: string): string | null {
  const api = new URL(apiUrl);
  const prefix = `${api.origin}/realms/${encodeURIComponent(realmId)}/interaction/`;
  if (!returnTo.startsWith(prefix)) return null;
  return /^[A-Za-z0-9_-]{1,64}\/federation$/.test(returnTo.slice(prefix.length)) ? returnTo : null;
}

/** A page of a dev server on this machine: plain http, a loopback name, an explicit port, and the same checks as an allowed URL. */
function localDevServer(returnTo: string): boolean {
  // Checked as if it were on the allow-list: no userinfo, backslash, whitespace, fragment or `..`.
  const url = allowedReturnUrl(returnTo, [returnTo], 'http://invalid');
  return url !== null && url.protocol === 'http:' && (url.hostname === 'localhost' || url.hostname === '127.0.0.1') && url.port !== '';
}
