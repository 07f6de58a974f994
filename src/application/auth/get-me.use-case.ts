import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { User } from '../../domain/user/user';
import { UserRepository } from '../ports/user.repository';

@Injectable()
export class GetMeUseCase {
  constructor(private readonly users: UserRepository) {}

  /**
   * The caller's user; `loaded` is the one the access-token check already read with the session.
   * @throws DomainError INVALID_TOKEN when the token's user no longer exists
   */
  async execute(input: { realmId: string; userId: string; loaded?: User }): Promise<User> {
    if (input.loaded && input.loaded.id === input.userId && input.loaded.realmId === input.realmId) return input.loaded;
    const user = await this.users.findById(input.realmId, input.userId);
    if (!user) throw new DomainError('INVALID_TOKEN', 'The access token is invalid');
    return user;
  }
}
