import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RealmRepository } from '../../../application/ports/realm.repository';
import { AppConfig } from '../../../config/app-config';
import { DomainError } from '../../../domain/errors';
import { Realm } from '../../../domain/realm/realm';
import { REALM_MODE } from '../decorators';
import { AppRequest } from '../request-context';

const CACHE_MS = 30_000;

/** Resolves X-Realm-Id to a realm. Known realms are cached briefly; unknown ones never. */
@Injectable()
export class RealmGuard implements CanActivate {
  private readonly cache = new Map<string, { realm: Realm; at: number }>();

  constructor(
    private readonly reflector: Reflector,
    private readonly realms: RealmRepository,
    private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const mode =
      this.reflector.getAllAndOverride<'default' | 'required' | 'none'>(REALM_MODE, [context.getHandler(), context.getClass()]) ??
      'default';
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
    req.realm = await this.find(id);
    return true;
  }

  private async find(id: string): Promise<Realm> {
    const cached = this.cache.get(id);
    if (cached && Date.now() - cached.at < CACHE_MS) return cached.realm;
    const realm = await this.realms.findById(id);
    if (!realm) throw new DomainError('REALM_NOT_FOUND', `Realm "${id}" does not exist`);
    this.cache.set(id, { realm, at: Date.now() });
    return realm;
  }
}
