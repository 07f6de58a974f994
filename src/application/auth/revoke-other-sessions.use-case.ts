import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { ListOwnSessionsUseCase } from './list-own-sessions.use-case';
import { revokeByOwner } from './revoke-own-session.use-case';

/** Ends every live session of the caller but the one making the request (DELETE /sessions). */
@Injectable()
export class RevokeOtherSessionsUseCase {
  constructor(
    private readonly ownSessions: ListOwnSessionsUseCase,
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Only live sessions count (an expired one is already ended), and each one ended gets its own
   * `session.revoked` event.
   * @returns how many sessions were ended
   */
  async execute(input: { realm: Realm; userId: string; currentSessionId: string; ip: string }): Promise<number> {
    const owner = { realmId: input.realm.id, userId: input.userId, ip: input.ip };
    const others = (await this.ownSessions.execute(input)).filter((s) => s.id !== input.currentSessionId);
    const now = this.clock.now();
    return this.tx.run(async () => {
      let revoked = 0;
      for (const session of others) {
        // A session ended meanwhile (logout in another tab) is not counted twice.
        if (await revokeByOwner({ sessions: this.sessions, audit: this.audit }, owner, session.id, now, { scope: 'all_but_current' }))
          revoked += 1;
      }
      return revoked;
    });
  }
}
