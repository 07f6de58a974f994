import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { Principal } from '../../application/auth/authenticate.use-case';
import { AppConfig } from '../../config/app-config';
import { Realm } from '../../domain/realm/realm';
import { AppRequest } from './request-context';

export const IS_PUBLIC = 'app:public';
export const REALM_MODE = 'app:realm-mode';
export const IS_ADMIN = 'app:admin';

/** No access token needed. */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/**
 * How a route reads X-Realm-Id: `default` falls back to the default realm,
 * `required` answers 400 when absent, `none` ignores it (health, JWKS, docs).
 */
export const RealmHeader = (mode: 'default' | 'required' | 'none') => SetMetadata(REALM_MODE, mode);

/** Administrative routes: realm-admin of the realm, or super-admin of master. */
export const AdminRoute = () => SetMetadata(IS_ADMIN, true);

export const RATE_LIMIT = 'app:rate-limit';
export type RateLimitName = keyof AppConfig['rateLimits'];

/**
 * The row of the rate-limit table a route counts against (e.g. `@RateLimit('login')`); every route without
 * one shares the `default` limit. Keys per row are decided in RateLimitGuard.
 */
export const RateLimit = (name: RateLimitName) => SetMetadata(RATE_LIMIT, name);

export const CurrentRealm = createParamDecorator((_: unknown, ctx: ExecutionContext): Realm => {
  const realm = ctx.switchToHttp().getRequest<AppRequest>().realm;
  if (!realm) throw new Error('RealmGuard did not run for this route');
  return realm;
});

export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<AppRequest>().principal;
  if (!principal) throw new Error('AccessTokenGuard did not run for this route');
  return principal;
});
