import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { Session } from '../../domain/session/session';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';

/** How recent a sign-in confirms a change for an account without a password. */
export const PASSWORDLESS_CONFIRMATION_MAX_AGE_SECONDS = 600;

/**
 * What the caller's session must be to add, change or remove a way into the account (a
 * password, TOTP, a security key or passkey, recovery codes, a linked identity), each check one
 * read of the session:
 * - never flagged: a session whose refresh came from another device keeps reading
 *   with its access tokens, but changes nothing until it passes the second-factor step —
 *   else a thief holding it would add their own passkey and keep it past the owner's next
 *   sign-in, step-up and password reset;
 * - for a change that adds a way in (a new TOTP secret, a new security key, a link, a first
 *   password), also opened by a sign-in at most `RECENT_AUTH_MAX_AGE_SECONDS` ago. Refreshing
 *   tokens keeps a session alive but is not a new sign-in, so a stolen long-lived session cannot
 *   bind the thief's authenticator to the account.
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
   * For a change to the ways in that needs no recent sign-in (it is confirmed otherwise, by the
   * password, a code of the new factor or a pending ceremony): the session is not flagged.
   * @throws DomainError FORBIDDEN when the session is flagged | INVALID_TOKEN when the session no longer exists
   */
  async requireUnflagged(realmId: string, sessionId: string, action: string): Promise<void> {
    await this.unflagged(realmId, sessionId, action);
  }

  /**
   * For a change that adds a way in: the session is not flagged and its sign-in is recent.
   * @throws DomainError FORBIDDEN when the session is flagged or its sign-in is older than the limit |
   *   INVALID_TOKEN when the session no longer exists
   */
  async require(realmId: string, sessionId: string, action: string, maxAgeSeconds = this.config.recentAuthMaxAgeSeconds): Promise<void> {
    const session = await this.unflagged(realmId, sessionId, action);
    const ageSeconds = (this.clock.now().getTime() - session.snapshot().createdAt.getTime()) / 1000;
    if (ageSeconds <= maxAgeSeconds) return;
    const minutes = Math.max(1, Math.floor(maxAgeSeconds / 60));
    throw new DomainError('FORBIDDEN', `${action} needs a recent sign-in: sign in again, then retry within ${minutes} minutes`);
  }

  /**
   * What stands in for the password where an account without one confirms a change (removing a
   * factor, new recovery codes): its session is not flagged and signed in within the last 10 minutes.
   * @throws DomainError FORBIDDEN | INVALID_TOKEN
   */
  requireForConfirmation(realmId: string, sessionId: string, action: string): Promise<void> {
    return this.require(realmId, sessionId, action, PASSWORDLESS_CONFIRMATION_MAX_AGE_SECONDS);
  }

  private async unflagged(realmId: string, sessionId: string, action: string): Promise<Session> {
    const session = await this.sessions.findById(realmId, sessionId);
    if (!session) throw new DomainError('INVALID_TOKEN', 'The session of this access token has ended');
    if (session.status === 'flagged') {
      throw new DomainError(
        'FORBIDDEN',
        `${action} is not possible from this session: it was used from another device and is on hold; sign in again, then retry`,
      );
    }
    return session;
  }
}
