import { Module } from '@nestjs/common';
import { CreateRoleUseCase } from '../application/roles/create-role.use-case';
import { DeleteRoleUseCase } from '../application/roles/delete-role.use-case';
import { ListRolesUseCase } from '../application/roles/list-roles.use-case';
import { AdminRolesController } from '../adapters/http/controllers/admin-roles.controller';

/** Realm roles over REST and the CLI: list, define, delete (the repository is bound with the others). */
@Module({
  controllers: [AdminRolesController],
  providers: [ListRolesUseCase, CreateRoleUseCase, DeleteRoleUseCase],
  exports: [ListRolesUseCase, CreateRoleUseCase, DeleteRoleUseCase],
})
export class RolesModule {}
