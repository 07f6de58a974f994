import { Injectable } from '@nestjs/common';
import { parseAppMetadata } from '../../domain/user/app-metadata';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { AdminActor, lockTargetUser } from './admin-actor';

@Injectable()
export class SetUserAppMetadataUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Replaces the user's app metadata (`{}` clears it). The next access token (at the next
   * refresh) carries it as `app_metadata`.
   * @throws DomainError USER_NOT_FOUND | VALIDATION_FAILED (not an object, over 1 KiB, nested over 3 levels) | FORBIDDEN (a super-admin, for a realm-admin)
   */
  async execute(input: { actor: AdminActor; realmId: string; userId: string; appMetadata: unknown }): Promise<User> {
    const { actor, realmId } = input;
    const now = this.clock.now();
    // Refused before any row is locked.
    const appMetadata = parseAppMetadata(input.appMetadata);
    return this.tx.run(async () => {
      const user = await lockTargetUser(this.users, actor, realmId, input.userId);
      const before = user.appMetadata;
      user.setAppMetadata(appMetadata, now);
      await this.users.save(user);
      await this.audit.record({
        type: 'user.app_metadata_changed',
        realmId,
        userId: user.id,
        actorId: actor.id,
        ip: actor.ip,
        at: now,
        // Not secret: every access token of the user carries it, readable by the user's client.
        details: { before, after: user.appMetadata },
      });
      return user;
    });
  }
}
