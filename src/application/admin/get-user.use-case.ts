import { Injectable } from '@nestjs/common';
import { User } from '../../domain/user/user';
import { UserRepository } from '../ports/user.repository';
import { findTargetUser } from './admin-actor';

@Injectable()
export class GetUserUseCase {
  constructor(private readonly users: UserRepository) {}

  /** @throws DomainError USER_NOT_FOUND */
  execute(input: { realmId: string; userId: string }): Promise<User> {
    return findTargetUser(this.users, input.realmId, input.userId);
  }
}
