import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { Role } from '../../domain/role/role';
import { RoleRepository } from '../ports/role.repository';
import { realmRoles } from './realm-roles';

@Injectable()
export class ListRolesUseCase {
  constructor(private readonly roles: RoleRepository) {}

  /** The realm's built-in roles, then the ones it defines, by name. */
  execute(input: { realm: Realm }): Promise<Role[]> {
    return realmRoles(this.roles, input.realm);
  }
}
