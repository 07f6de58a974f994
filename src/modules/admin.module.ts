import { Module } from '@nestjs/common';
import { ActivateUserUseCase } from '../application/admin/activate-user.use-case';
import { AuthorizeAdminUseCase } from '../application/admin/authorize-admin.use-case';
import { BootstrapUseCase } from '../application/admin/bootstrap.use-case';
import { CreateAdminUseCase } from '../application/admin/create-admin.use-case';
import { CreateRealmUseCase } from '../application/admin/create-realm.use-case';
import { CreateUserUseCase } from '../application/admin/create-user.use-case';
import { DeleteUserUseCase } from '../application/admin/delete-user.use-case';
import { GetUserUseCase } from '../application/admin/get-user.use-case';
import { ListEventsUseCase } from '../application/admin/list-events.use-case';
import { ListRealmsUseCase } from '../application/admin/list-realms.use-case';
import { ListSessionsUseCase } from '../application/admin/list-sessions.use-case';
import { ListUsersUseCase } from '../application/admin/list-users.use-case';
import { ResetUserMfaUseCase } from '../application/admin/reset-user-mfa.use-case';
import { ResetUserPasswordUseCase } from '../application/admin/reset-user-password.use-case';
import { RevokeSessionUseCase } from '../application/admin/revoke-session.use-case';
import { RevokeUserSessionsUseCase } from '../application/admin/revoke-user-sessions.use-case';
import { RotateSigningKeysUseCase } from '../application/admin/rotate-signing-keys.use-case';
import { SetUserAppMetadataUseCase } from '../application/admin/set-user-app-metadata.use-case';
import { SetUserRolesUseCase } from '../application/admin/set-user-roles.use-case';
import { SuspendUserUseCase } from '../application/admin/suspend-user.use-case';
import { UnlockUserUseCase } from '../application/admin/unlock-user.use-case';
import { AdminEventsController } from '../adapters/http/controllers/admin-events.controller';
import { AdminRealmsController } from '../adapters/http/controllers/admin-realms.controller';
import { AdminSessionsController } from '../adapters/http/controllers/admin-sessions.controller';
import { AdminUsersController } from '../adapters/http/controllers/admin-users.controller';
import { BootstrapRunner } from '../adapters/lifecycle/bootstrap-runner';
import { AuthModule } from './auth.module';

const users = [
  ListUsersUseCase,
  CreateUserUseCase,
  GetUserUseCase,
  DeleteUserUseCase,
  SuspendUserUseCase,
  ActivateUserUseCase,
  UnlockUserUseCase,
  ResetUserPasswordUseCase,
  ResetUserMfaUseCase,
  SetUserRolesUseCase,
  SetUserAppMetadataUseCase,
];
const sessionsAndEvents = [ListSessionsUseCase, RevokeSessionUseCase, RevokeUserSessionsUseCase, ListEventsUseCase];
const realmsAndKeys = [ListRealmsUseCase, CreateRealmUseCase, CreateAdminUseCase, RotateSigningKeysUseCase];

/** Administration over REST and the CLI: users, sessions, events, realms, admins, signing keys; the first admin. */
@Module({
  imports: [AuthModule],
  controllers: [AdminUsersController, AdminSessionsController, AdminEventsController, AdminRealmsController],
  providers: [AuthorizeAdminUseCase, ...users, ...sessionsAndEvents, ...realmsAndKeys, BootstrapUseCase, BootstrapRunner],
  exports: [AuthorizeAdminUseCase],
})
export class AdminModule {}
