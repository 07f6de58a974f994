import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { AccessTokens, VerifiedAccessToken } from '../ports/access-tokens';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';

/** The authenticated caller behind a bearer token. */
export type Principal = VerifiedAccessToken;

@Injectable()
export class AuthenticateUseCase {
  constructor(
    private readonly accessTokens: AccessTokens,
    private readonly sessions: SessionRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Verifies an access token and that its session is still live, so logout, revocation and
   * suspension take effect before the token's `exp` (contract §3.4).
   * @throws DomainError TOKEN_EXPIRED | INVALID_TOKEN
   */
  async execute(token: string): Promise<Principal> {
    const now = this.clock.now();
    const claims = await this.accessTokens.verify(token, now);
    if (!(await this.sessions.isLive(claims.realm, claims.sid, now, this.config.sessionIdleTimeoutSeconds))) {
      throw new DomainError('INVALID_TOKEN', 'The session of this access token has ended');
    }
    return claims;
  }
}
