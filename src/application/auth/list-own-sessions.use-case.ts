import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
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
    private readonly config: AppConfig,
  ) {}

  async execute(input: { realmId: string; userId: string }): Promise<Session[]> {
    const now = this.clock.now();
    const all: Session[] = [];
    for (let page = 1; ; page++) {
      const { sessions, total } = await this.sessions.list({
        realmId: input.realmId,
        userId: input.userId,
        page,
        limit: PAGE,
        now,
        idleTimeoutSeconds: this.config.sessionIdleTimeoutSeconds,
      });
      all.push(...sessions);
      if (sessions.length < PAGE || all.length >= total) return all;
    }
  }
}
