import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { ClientContext } from '../sign-in/client-context';
import { DpopRequest } from '../sign-in/dpop-binding';
import { RefreshTokenResolver } from '../sign-in/refresh-token-resolver';

@Injectable()
export class LogoutUseCase {
  constructor(
    private readonly resolver: RefreshTokenResolver,
    private readonly sessions: SessionRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Ends the session the refresh token belongs to; an ended session is a success.
   * @throws DomainError INVALID_TOKEN for a token that never existed (in this realm); INVALID_DPOP_PROOF
   *   when the session is bound to a DPoP key and the request has no valid proof made with it
   */
  async execute(input: { realm: Realm; refreshToken: string; client: ClientContext; dpop?: DpopRequest | null }): Promise<void> {
    const context = await this.resolver.resolve(input.realm, input.refreshToken);
    if (!context) throw new DomainError('INVALID_TOKEN', 'The refresh token is invalid');
    const now = this.clock.now();
    await this.resolver.assertKeyHolder(input.realm, context, input.dpop, input.client, 'logout', now);
    await this.tx.run(async () => {
      if (await this.sessions.revoke(input.realm.id, context.session.id, now, 'logout')) {
        await this.audit.record({
          type: 'logout',
          realmId: input.realm.id,
          userId: context.user.id,
          sessionId: context.session.id,
          ip: input.client.ip,
          at: now,
        });
      }
    });
  }
}
