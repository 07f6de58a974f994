import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AdminActor } from '../../../application/admin/admin-actor';
import { AuthorizeAdminUseCase } from '../../../application/admin/authorize-admin.use-case';
import { AdminActionName } from '../../../domain/admin/admin-policy';
import { ADMIN_PATH } from '../admin-routes';
import { ADMIN_ACTION, routeMetadata } from '../decorators';
import { AppRequest, clientIp } from '../request-context';

type AdminRequest = AppRequest & { admin?: AdminActor };

/** The administrator the AdminGuard admitted. */
export const CurrentAdmin = createParamDecorator((_: unknown, ctx: ExecutionContext): AdminActor => {
  const admin = ctx.switchToHttp().getRequest<AdminRequest>().admin;
  if (!admin) throw new Error('AdminGuard did not run for this route');
  return admin;
});

/**
 * Global guard, after RealmGuard and AccessTokenGuard: a route marked @AdminAction runs only when
 * the admin policy allows the token that action in the X-Realm-Id realm, on the user or session
 * the route's `:id` names; else 403 FORBIDDEN, audited. It runs before body validation, so a
 * refused caller learns nothing from the answer.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authorize: AuthorizeAdminUseCase,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AdminRequest>();
    const action = routeMetadata<AdminActionName>(this.reflector, ADMIN_ACTION, context);
    if (!action) {
      // AdminRoutesCheck keeps such an app from starting; should one run anyway, it fails closed.
      if (req.path.startsWith(`${ADMIN_PATH}/`)) throw new Error(`${req.method} ${req.path} declares no admin action`);
      return true;
    }
    if (!req.principal || !req.realm) throw new Error('AdminGuard runs after RealmGuard and AccessTokenGuard');
    const targetId = (req.params as Record<string, string | undefined>).id;
    req.admin = await this.authorize.execute({
      principal: req.principal,
      account: req.principal.user,
      realmId: req.realm.id,
      action,
      targetId,
      ip: clientIp(req),
    });
    return true;
  }
}
