import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RealmDirectory } from '../../../application/realm/realm-directory';
import { AppConfig } from '../../../config/app-config';
import { DomainError } from '../../../domain/errors';
import { Realm } from '../../../domain/realm/realm';
import { IS_ADMIN, REALM_MODE, routeMetadata } from '../decorators';
import { AppRequest } from '../request-context';

/**
 * Resolves X-Realm-Id to a realm through the realm directory (a few seconds' cache, so no query
 * on the hot paths). A disabled realm answers 403 REALM_DISABLED on every route but the admin API.
 */
@Injectable()
export class RealmGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly realms: RealmDirectory,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const mode = routeMetadata<'default' | 'required' | 'none'>(this.reflector, REALM_MODE, context) ?? 'default';
    if (mode === 'none') return true;
    const req = context.switchToHttp().getRequest<AppRequest>();
    const header = req.headers['x-realm-id'];
    let id: string;
    if (header === undefined) {
      if (mode === 'required') throw DomainError.validation('X-Realm-Id', 'header is required');
      id = this.config.defaultRealm;
    } else if (typeof header !== 'string' || !Realm.isValidId(header)) {
      throw DomainError.validation('X-Realm-Id', 'must match ^[a-z0-9][a-z0-9-]{0,62}$');
    } else {
      id = header;
    }
    const realm = await this.realms.find(id);
    if (!realm) throw new DomainError('REALM_NOT_FOUND', `Realm "${id}" does not exist`);
    // Administrators must be able to look at a disabled realm and enable it again.
    if (!realm.enabled && !routeMetadata<boolean>(this.reflector, IS_ADMIN, context)) {
      throw new DomainError('REALM_DISABLED', `Realm "${id}" is disabled`);
    }
    req.realm = realm;
    return true;
  }
}
