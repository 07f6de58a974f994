import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { AuthenticateUseCase, Principal } from '../../../application/auth/authenticate.use-case';
import { DpopBinding } from '../../../application/sign-in/dpop-binding';
import { Clock } from '../../../application/ports/clock';
import { DomainError } from '../../../domain/errors';
import { IS_ADMIN, IS_PUBLIC, routeMetadata } from '../decorators';
import { DPOP_CHALLENGE } from '../errors/render-error';
import { AppRequest, dpopRequest } from '../request-context';

const AUTHORIZATION = /^(Bearer|DPoP) ([A-Za-z0-9_.~+/=-]+)$/;

/**
 * Global guard: every route needs a valid access token unless marked @Public(). Tokens come only
 * from the Authorization header, never from a URL. A token bound to a DPoP key (`cnf.jkt`) is
 * accepted only as `Authorization: DPoP` with a fresh proof by that key covering the token; an
 * unbound one only as `Bearer`.
 */
@Injectable()
export class AccessTokenGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticate: AuthenticateUseCase,
    private readonly dpop: DpopBinding,
    private readonly clock: Clock,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (routeMetadata<boolean>(this.reflector, IS_PUBLIC, context)) return true;
    const http = context.switchToHttp();
    const req = http.getRequest<AppRequest>();
    const match = AUTHORIZATION.exec(req.headers.authorization ?? '');
    if (!match) throw new DomainError('INVALID_TOKEN', 'A bearer access token is required');
    const [, scheme, token] = match;
    const principal = await this.verified(scheme, token, http.getResponse<Response>());
    if (principal.cnf) {
      // The thumbprint travels in the token: checking the proof costs one signature, no query.
      if (scheme !== 'DPoP') throw new DomainError('INVALID_DPOP_PROOF', 'A DPoP-bound access token must be sent as Authorization: DPoP');
      await this.dpop.assertResourceProof(principal.cnf.jkt, token, dpopRequest(req), this.clock.now());
    } else if (scheme === 'DPoP') {
      http.getResponse<Response>().setHeader('WWW-Authenticate', DPOP_CHALLENGE('invalid_token'));
      throw new DomainError('INVALID_TOKEN', 'This access token is not DPoP-bound: send it as Bearer');
    }
    // Admin routes decide realm access themselves (a super-admin administers every realm).
    if (!routeMetadata<boolean>(this.reflector, IS_ADMIN, context) && principal.realm !== req.realm?.id) {
      throw new DomainError('INVALID_TOKEN', 'The access token belongs to another realm');
    }
    req.principal = principal;
    return true;
  }

  /** A DPoP caller learns of a bad token through the DPoP challenge. */
  private async verified(scheme: string, token: string, res: Response): Promise<Principal> {
    try {
      return await this.authenticate.execute(token);
    } catch (error) {
      if (scheme === 'DPoP') res.setHeader('WWW-Authenticate', DPOP_CHALLENGE('invalid_token'));
      throw error;
    }
  }
}
