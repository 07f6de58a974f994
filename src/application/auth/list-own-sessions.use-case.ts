import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { Session } from '../../domain/session/session';
import { Clock } from '../ports/clock';
import { SessionRepository } from '../ports/session.repository';

const PAGE = 100;

/** The caller's live sessions, newest first (GET /sessions). */
@Injectable()
export class ListOwnSessionsUseCase {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly clock: Clock,
  ) {}

  async execute(input: { realm: Realm; userId: string }): Promise<Session[]> {
    const now = this.clock.now();
    const all: Session[] = [];
    for (let page = 1; ; page++) {
      const { sessions, total } = await this.sessions.list({
        realmId: input.realm.id,
        userId: input.userId,
        page,
        limit: PAGE,
        now,
        lifetime: input.realm.policy.sessionLifetime,
      });
      all.push(...sessions);
      if (sessions.length < PAGE || all.length >= total) return all;
    }
  }
}
