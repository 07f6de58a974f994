import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { AdminActor } from './admin-actor';

const notFound = () => new DomainError('SESSION_NOT_FOUND', 'Session not found');

@Injectable()
export class RevokeSessionUseCase {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Ends one live session of the realm; its refresh and access tokens stop working at once.
   * @throws DomainError SESSION_NOT_FOUND for an unknown id, one of another realm, or a session
   *   already ended (revoked or expired)
   */
  async execute(input: { actor: AdminActor; realm: Realm; sessionId: string }): Promise<void> {
    const { actor, realm } = input;
    const realmId = realm.id;
    const now = this.clock.now();
    const session = await this.sessions.findById(realmId, input.sessionId);
    if (!session || !session.isLive(now, realm.policy.sessionLifetime)) throw notFound();
    await this.tx.run(async () => {
      // Conditional on revoked_at IS NULL: of two concurrent revocations one wins, the other is a 404.
      if (!(await this.sessions.revoke(realmId, session.id, now, 'admin'))) throw notFound();
      await this.audit.record({
        type: 'session.revoked',
        realmId,
        userId: session.userId,
        sessionId: session.id,
        actorId: actor.id,
        ip: actor.ip,
        at: now,
        details: { by: 'admin' },
      });
    });
  }
}
