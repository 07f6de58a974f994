import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';

/**
 * "Recent authentication" for changes that add a way to sign in (a new TOTP secret, a new
 * security key): the caller's session must have been opened by a sign-in at most
 * `RECENT_AUTH_MAX_AGE_SECONDS` ago. Refreshing tokens keeps a session alive but is not a new
 * sign-in, so a stolen long-lived session cannot bind the thief's authenticator to the account.
 * Removing a factor asks for the password instead.
 */
@Injectable()
export class RecentAuthentication {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly clock: Clock,
    private readonly config: AppConfig,
  ) {}

  /**
   * @throws DomainError FORBIDDEN when the session's sign-in is older than the limit |
   *   INVALID_TOKEN when the session no longer exists
   */
  async require(realmId: string, sessionId: string, action: string): Promise<void> {
    const session = await this.sessions.findById(realmId, sessionId);
    if (!session) throw new DomainError('INVALID_TOKEN', 'The session of this access token has ended');
    const ageSeconds = (this.clock.now().getTime() - session.snapshot().createdAt.getTime()) / 1000;
    if (ageSeconds <= this.config.recentAuthMaxAgeSeconds) return;
    const minutes = Math.max(1, Math.floor(this.config.recentAuthMaxAgeSeconds / 60));
    throw new DomainError('FORBIDDEN', `${action} needs a recent sign-in: sign in again, then retry within ${minutes} minutes`);
  }
}
