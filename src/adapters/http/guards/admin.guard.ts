import { CanActivate, createParamDecorator, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AdminActor } from '../../../application/admin/admin-actor';
import { AuthorizeAdminUseCase } from '../../../application/admin/authorize-admin.use-case';
import { IS_ADMIN, routeMetadata } from '../decorators';
import { AppRequest, clientIp } from '../request-context';

const SUPER_ADMIN_ONLY = 'app:super-admin-only';

/** Administrative routes that only a super-admin of master may call (realms, the admin API). */
export const SuperAdminOnly = () => SetMetadata(SUPER_ADMIN_ONLY, true);

type AdminRequest = AppRequest & { admin?: AdminActor };

/** The administrator the AdminGuard admitted. */
export const CurrentAdmin = createParamDecorator((_: unknown, ctx: ExecutionContext): AdminActor => {
  const admin = ctx.switchToHttp().getRequest<AdminRequest>().admin;
  if (!admin) throw new Error('AdminGuard did not run for this route');
  return admin;
});

/**
 * Global guard, after RealmGuard and AccessTokenGuard: on routes marked @AdminRoute() the
 * verified token must administer the realm of X-Realm-Id (realm-admin of it, or super-admin of
 * master), else 403 FORBIDDEN.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authorize: AuthorizeAdminUseCase,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!routeMetadata<boolean>(this.reflector, IS_ADMIN, context)) return true;
    const req = context.switchToHttp().getRequest<AdminRequest>();
    if (!req.principal || !req.realm) throw new Error('AdminGuard runs after RealmGuard and AccessTokenGuard');
    req.admin = await this.authorize.execute({
      principal: req.principal,
      account: req.principal.user,
      realmId: req.realm.id,
      superAdminOnly: routeMetadata<boolean>(this.reflector, SUPER_ADMIN_ONLY, context) ?? false,
      ip: clientIp(req),
    });
    return true;
  }
}
