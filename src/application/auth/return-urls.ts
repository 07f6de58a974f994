import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { allowedReturnUrl } from '../../domain/federation/return-url';
import { Realm } from '../../domain/realm/realm';

/**
 * Where a sign-in started in a browser may send that browser back: a page of the service's own
 * account console (on `API_URL`'s origin, under `/account/`), or one of the realm's allowed return
 * URLs, matched exactly (`allowedReturnUrl`). Anything else is refused, so no link of ours is an
 * open redirect.
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
    throw DomainError.validation(field, "must be one of the realm's allowed return URLs or a page of the account console");
  }
}
