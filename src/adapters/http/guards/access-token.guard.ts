import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthenticateUseCase } from '../../../application/auth/authenticate.use-case';
import { DomainError } from '../../../domain/errors';
import { IS_ADMIN, IS_PUBLIC } from '../decorators';
import { AppRequest } from '../request-context';

const BEARER = /^Bearer ([A-Za-z0-9_.~+/=-]+)$/;

/**
 * Global guard: every route needs a valid access token unless marked @Public(). Tokens come only
 * from the Authorization header, never from a URL.
 */
@Injectable()
export class AccessTokenGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticate: AuthenticateUseCase,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const req = context.switchToHttp().getRequest<AppRequest>();
    const match = BEARER.exec(req.headers.authorization ?? '');
    if (!match) throw new DomainError('INVALID_TOKEN', 'A bearer access token is required');
    const principal = await this.authenticate.execute(match[1]);
    // Admin routes decide realm access themselves (a super-admin administers every realm).
    if (!this.reflector.getAllAndOverride<boolean>(IS_ADMIN, targets) && principal.realm !== req.realm?.id) {
      throw new DomainError('INVALID_TOKEN', 'The access token belongs to another realm');
    }
    req.principal = principal;
    return true;
  }
}
