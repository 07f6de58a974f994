import { Injectable } from '@nestjs/common';
import { UserStatus, UserSummary } from '../../domain/user/user';
import { Clock } from '../ports/clock';
import { UserRepository, UserSort } from '../ports/user.repository';

export interface ListUsersInput {
  realmId: string;
  page: number;
  limit: number;
  search?: string;
  status?: UserStatus;
  emailVerified?: boolean;
  sort?: UserSort;
}

@Injectable()
export class ListUsersUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly clock: Clock,
  ) {}

  /** One page of the realm's users, `-createdAt` unless sorted otherwise. */
  execute(input: ListUsersInput): Promise<{ users: UserSummary[]; total: number }> {
    const search = input.search?.trim();
    return this.users.list({
      realmId: input.realmId,
      page: input.page,
      limit: input.limit,
      search: search ? search : undefined,
      status: input.status,
      emailVerified: input.emailVerified,
      sort: input.sort ?? '-createdAt',
      now: this.clock.now(),
    });
  }
}
