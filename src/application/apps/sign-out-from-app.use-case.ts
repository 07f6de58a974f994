import { Injectable } from '@nestjs/common';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';

export interface SignOutFromAppInput {
  realmId: string;
  /** The service's session the browser signed in to the apps with. */
  sessionId: string;
  userId: string;
  /** The app that asked for the logout, when known. */
  clientId: string | null;
  ip: string;
}

/**
 * A logout an app asked for (RP-initiated logout), once the user confirmed it on the service's
 * page: ends the browser's session as POST /logout does (audited `logout`), and with it, like
 * every session end, the apps' session-bound grants and their back-channel logouts.
 */
@Injectable()
export class SignOutFromAppUseCase {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  async execute(input: SignOutFromAppInput): Promise<void> {
    const now = this.clock.now();
    await this.tx.run(async () => {
      if (!(await this.sessions.revoke(input.realmId, input.sessionId, now, 'logout'))) return;
      await this.audit.record({
        type: 'logout',
        realmId: input.realmId,
        userId: input.userId,
        sessionId: input.sessionId,
        ip: input.ip,
        at: now,
        details: input.clientId ? { clientId: input.clientId } : {},
      });
    });
  }
}
