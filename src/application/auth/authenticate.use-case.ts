import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { AccessTokens, VerifiedAccessToken } from '../ports/access-tokens';
import { Clock } from '../ports/clock';
import { User } from '../../domain/user/user';
import { UserRepository } from '../ports/user.repository';
import { RealmDirectory } from '../realm/realm-directory';

/** The authenticated caller behind a bearer token, with the user read alongside the session check. */
export type Principal = VerifiedAccessToken & { readonly user: User };

@Injectable()
export class AuthenticateUseCase {
  constructor(
    private readonly accessTokens: AccessTokens,
    private readonly users: UserRepository,
    private readonly clock: Clock,
    private readonly realms: RealmDirectory,
  ) {}

  /**
   * Verifies an access token and that its session is still live under its realm's current
   * session limits, so logout, revocation, suspension and a realm being disabled take effect
   * before the token's `exp`. The realm comes from the directory's cache: no query of its own.
   * @throws DomainError TOKEN_EXPIRED | INVALID_TOKEN
   */
  async execute(token: string): Promise<Principal> {
    const now = this.clock.now();
    const claims = await this.accessTokens.verify(token, now);
    const realm = await this.realms.find(claims.realm);
    if (!realm?.enabled) throw new DomainError('INVALID_TOKEN', 'The realm of this access token is disabled');
    // Session liveness and the user in one round trip: this runs on every authenticated request.
    const user = await this.users.findWithLiveSession(claims.realm, claims.sub, claims.sid, now, realm.policy.sessionLifetime);
    if (!user) throw new DomainError('INVALID_TOKEN', 'The session of this access token has ended');
    // Suspension revokes every session; this also covers a session written by a login that raced it.
    if (user.statusAt(now) === 'suspended') throw new DomainError('INVALID_TOKEN', 'The session of this access token has ended');
    // Not enumerable: a principal that ends up in a log line or a spread never carries the user's state.
    return Object.defineProperty({ ...claims }, 'user', { value: user, enumerable: false }) as Principal;
  }
}
