import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';

/**
 * Where a sign-in started in a browser may send that browser back: a page of the service's own
 * account console (on `API_URL`'s origin, under `/account/`), or one of the realm's allowed return
 * URLs, matched exactly. Anything else is refused, so no link of ours is an open redirect.
 */
@Injectable()
export class ReturnUrls {
  private readonly consoleOrigin: string;

  constructor(config: AppConfig) {
    this.consoleOrigin = new URL(config.apiUrl).origin;
  }

  /**
   * The URL as given, once allowed.
   * @throws DomainError VALIDATION_FAILED (field `field`) when it is not an allowed return URL
   */
  assertAllowed(realm: Realm, returnTo: string, field = 'returnTo'): string {
    if (this.allowed(realm, returnTo)) return returnTo;
    throw DomainError.validation(field, "must be one of the realm's allowed return URLs or a page of the account console");
  }

  private allowed(realm: Realm, returnTo: string): boolean {
    if (returnTo.length > 2048 || returnTo.includes('#') || /[\\\s]/.test(returnTo)) return false;
    let url: URL;
    try {
      url = new URL(returnTo);
    } catch {
      return false;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
    if (url.username || url.password) return false;
    if (url.origin === this.consoleOrigin && url.pathname.startsWith('/account/') && !/\/\.\.?(\/|$)/.test(url.pathname)) return true;
    return allowedByRealm(realm).includes(returnTo);
  }
}

/** The realm's own allow-list (`allowedReturnUrls`), where its settings have one. */
function allowedByRealm(realm: Realm): readonly string[] {
  const settings = realm.settings as unknown as { allowedReturnUrls?: readonly string[] };
  return settings.allowedReturnUrls ?? [];
}
