import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { User } from '../../domain/user/user';
import { Clock } from '../ports/clock';
import { OrganizationMemberRepository } from '../ports/organization-member.repository';
import { SessionRepository } from '../ports/session.repository';
import { SessionIssuer, TokenSet } from '../sign-in/session-issuer';

@Injectable()
export class SetActiveOrganizationUseCase {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly memberships: OrganizationMemberRepository,
    private readonly issuer: SessionIssuer,
    private readonly clock: Clock,
  ) {}

  /**
   * Makes an organization the caller belongs to the session's active one (null: none) and answers
   * a new access token of the same session with its `org` claim; the session's refreshes keep it.
   * @throws DomainError FORBIDDEN for an organization the caller is not a member of | INVALID_TOKEN when the session ended
   */
  async execute(input: {
    realm: Realm;
    user: User;
    sessionId: string;
    organizationId: string | null;
  }): Promise<Pick<TokenSet, 'accessToken' | 'expiresIn' | 'tokenType'>> {
    const { realm, user, sessionId, organizationId } = input;
    if (organizationId !== null && !(await this.memberships.claim(realm.id, organizationId, user.id))) {
      throw new DomainError('FORBIDDEN', 'The caller is not a member of this organization');
    }
    const ended = () => new DomainError('INVALID_TOKEN', 'The session of this access token has ended');
    if (!(await this.sessions.setActiveOrganization(realm.id, sessionId, organizationId))) throw ended();
    const session = await this.sessions.findById(realm.id, sessionId);
    if (!session) throw ended();
    return this.issuer.accessToken(realm, user, session, this.clock.now());
  }
}
