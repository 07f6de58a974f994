import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { AccessTokens, VerifiedAccessToken } from '../ports/access-tokens';
import { Clock } from '../ports/clock';
import { User } from '../../domain/user/user';
import { UserRepository } from '../ports/user.repository';

/** The authenticated caller behind a bearer token, with the user read alongside the session check. */
export type Principal = VerifiedAccessToken & { readonly user: User };

@Injectable()
export class AuthenticateUseCase {
  constructor(
    private readonly accessTokens: AccessTokens,
    private readonly users: UserRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * Verifies an access token and that its session is still live, so logout, revocation and
   * suspension take effect before the token's `exp`.
   * @throws DomainError TOKEN_EXPIRED | INVALID_TOKEN
   */
  async execute(token: string): Promise<Principal> {
    const now = this.clock.now();
    const claims = await this.accessTokens.verify(token, now);
    // Session liveness and the user in one round trip: this runs on every authenticated request.
    const user = await this.users.findWithLiveSession(claims.realm, claims.sub, claims.sid, now, this.config.sessionIdleTimeoutSeconds);
    if (!user) throw new DomainError('INVALID_TOKEN', 'The session of this access token has ended');
    // Suspension revokes every session; this also covers a session written by a login that raced it.
    if (user.statusAt(now) === 'suspended') throw new DomainError('INVALID_TOKEN', 'The session of this access token has ended');
    // Not enumerable: a principal that ends up in a log line or a spread never carries the user's state.
    return Object.defineProperty({ ...claims }, 'user', { value: user, enumerable: false }) as Principal;
  }
}
