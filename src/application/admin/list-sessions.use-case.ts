import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { Session, SessionStatus } from '../../domain/session/session';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';
import { UserRepository } from '../ports/user.repository';
import { MASTER_REALM } from '../../domain/realm/master-realm';
import { SUPER_ADMIN } from '../../domain/role/role-names';
import { AdminActor, findTargetUser } from './admin-actor';

export interface ListSessionsInput {
  actor: AdminActor;
  realm: Realm;
  userId?: string;
  status?: SessionStatus;
  page: number;
  limit: number;
  /** The user comes from the path (`/users/:id/sessions`): an unknown one is a 404, not an empty list. */
  userMustExist?: boolean;
}

@Injectable()
export class ListSessionsUseCase {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly users: UserRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Live sessions of the realm (neither revoked nor expired), newest first. A `userId` filter
   * matching nobody gives an empty list. Super-admins' sessions are left out for an actor the
   * admin policy hides them from.
   * @throws DomainError USER_NOT_FOUND when `userMustExist` and the user is unknown
   */
  async execute(input: ListSessionsInput): Promise<{ sessions: Session[]; total: number }> {
    if (input.userMustExist && input.userId !== undefined) await findTargetUser(this.users, input.realm.id, input.userId);
    const hidden = input.actor.hidesSuperAdmins ? await this.users.idsWithRole(MASTER_REALM, SUPER_ADMIN) : [];
    return this.sessions.list({
      realmId: input.realm.id,
      userId: input.userId,
      status: input.status,
      excludeUserIds: hidden,
      page: input.page,
      limit: input.limit,
      now: this.clock.now(),
      lifetime: input.realm.policy.sessionLifetime,
    });
  }
}
