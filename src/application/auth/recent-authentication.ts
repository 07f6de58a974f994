import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';

/** How recent a sign-in confirms a change for an account without a password. */
export const PASSWORDLESS_CONFIRMATION_MAX_AGE_SECONDS = 600;

/**
 * "Recent authentication" for changes that add a way to sign in (a new TOTP secret, a new
 * security key): the caller's session must have been opened by a sign-in at most
 * `RECENT_AUTH_MAX_AGE_SECONDS` ago. Refreshing tokens keeps a session alive but is not a new
 * sign-in, so a stolen long-lived session cannot bind the thief's authenticator to the account.
 * Removing a factor asks for the password instead — or, from an account without one, a sign-in
 * within the last 10 minutes (`requireForConfirmation`).
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
  async require(realmId: string, sessionId: string, action: string, maxAgeSeconds = this.config.recentAuthMaxAgeSeconds): Promise<void> {
    const session = await this.sessions.findById(realmId, sessionId);
    if (!session) throw new DomainError('INVALID_TOKEN', 'The session of this access token has ended');
    const ageSeconds = (this.clock.now().getTime() - session.snapshot().createdAt.getTime()) / 1000;
    if (ageSeconds <= maxAgeSeconds) return;
    const minutes = Math.max(1, Math.floor(maxAgeSeconds / 60));
    throw new DomainError('FORBIDDEN', `${action} needs a recent sign-in: sign in again, then retry within ${minutes} minutes`);
  }

  /**
   * What stands in for the password where an account without one confirms a change (removing a
   * factor, new recovery codes): its session signed in within the last 10 minutes.
   * @throws DomainError FORBIDDEN | INVALID_TOKEN
   */
  requireForConfirmation(realmId: string, sessionId: string, action: string): Promise<void> {
    return this.require(realmId, sessionId, action, PASSWORDLESS_CONFIRMATION_MAX_AGE_SECONDS);
  }
}
