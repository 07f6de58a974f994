import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { Principal } from '../../application/auth/authenticate.use-case';
import { AppConfig } from '../../config/app-config';
import { AdminActionName } from '../../domain/admin/admin-policy';
import { Realm } from '../../domain/realm/realm';
import { AppRequest } from './request-context';

export const IS_PUBLIC = 'app:public';
export const REALM_MODE = 'app:realm-mode';
export const IS_ADMIN = 'app:admin';
export const ADMIN_ACTION = 'app:admin-action';

/** No access token needed. */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/**
 * How a route reads X-Realm-Id: `default` falls back to the default realm,
 * `required` answers 400 when absent, `none` ignores it (health, JWKS, docs).
 */
export const RealmHeader = (mode: 'default' | 'required' | 'none') => SetMetadata(REALM_MODE, mode);

/**
 * An admin API route and the action it performs (`ADMIN_ACTIONS`): the admin guard lets it run
 * only when the admin policy allows the caller that action in the X-Realm-Id realm, on the user
 * or session its `:id` names. Every route under /v1/admin must carry one, or the app does not start.
 */
export const AdminAction = (action: AdminActionName) => applyDecorators(SetMetadata(IS_ADMIN, true), SetMetadata(ADMIN_ACTION, action));

export const RATE_LIMIT = 'app:rate-limit';
export type RateLimitName = keyof AppConfig['rateLimits'];

/**
 * The rows of the rate-limit table a route counts against (e.g. `@RateLimit('login')`; a request must
 * pass each of several); every route without one shares the `default` limit. Keys per row are
 * decided in RateLimitGuard.
 */
export const RateLimit = (...names: [RateLimitName, ...RateLimitName[]]) => SetMetadata(RATE_LIMIT, names);

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

/** Route metadata by controller class, then handler, then key; decorators are fixed once the app is built. */
const routeMetadataCache = new WeakMap<object, WeakMap<object, Map<string, unknown>>>();

/**
 * `reflector.getAllAndOverride(key, [handler, class])`, remembered per route: the guards ask
 * for the same few keys on every request, and reflect-metadata walks prototype chains each time.
 */
export function routeMetadata<T>(reflector: Reflector, key: string, context: ExecutionContext): T | undefined {
  const handler = context.getHandler();
  const controller = context.getClass();
  let byHandler = routeMetadataCache.get(controller);
  if (byHandler === undefined) routeMetadataCache.set(controller, (byHandler = new WeakMap()));
  let values = byHandler.get(handler);
  if (values === undefined) byHandler.set(handler, (values = new Map()));
  if (values.has(key)) return values.get(key) as T | undefined;
  const value = reflector.getAllAndOverride<T | undefined>(key, [handler, controller]);
  values.set(key, value);
  return value;
}
