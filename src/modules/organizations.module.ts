import { Module } from '@nestjs/common';
import { SetActiveOrganizationUseCase } from '../application/organizations/set-active-organization.use-case';
import { AuthModule } from './auth.module';
import { AcceptInvitationUseCase } from '../application/organizations/accept-invitation.use-case';
import { CreateInvitationUseCase } from '../application/organizations/create-invitation.use-case';
import { CreateOrganizationUseCase } from '../application/organizations/create-organization.use-case';
import { DeleteOrganizationUseCase } from '../application/organizations/delete-organization.use-case';
import { GetOrganizationUseCase } from '../application/organizations/get-organization.use-case';
import { ListInvitationsUseCase } from '../application/organizations/list-invitations.use-case';
import { ListMembersUseCase } from '../application/organizations/list-members.use-case';
import { ListOrganizationsUseCase } from '../application/organizations/list-organizations.use-case';
import { ListOwnOrganizationsUseCase } from '../application/organizations/list-own-organizations.use-case';
import { OrganizationAccess } from '../application/organizations/organization-access';
import { RemoveMemberUseCase } from '../application/organizations/remove-member.use-case';
import { RevokeInvitationUseCase } from '../application/organizations/revoke-invitation.use-case';
import { SetMemberRolesUseCase } from '../application/organizations/set-member-roles.use-case';
import { UpdateOrganizationUseCase } from '../application/organizations/update-organization.use-case';
import { AdminOrganizationsController } from '../adapters/http/controllers/admin-organizations.controller';
import { OrganizationsController } from '../adapters/http/controllers/organizations.controller';

/**
 * Organizations inside a realm: the admin routes, the members' own routes, and the one
 * enforcement point both pass through (`OrganizationAccess`). The repositories are bound with
 * the others, in the persistence module.
 */
@Module({
  imports: [AuthModule],
  controllers: [AdminOrganizationsController, OrganizationsController],
  providers: [
    OrganizationAccess,
    ListOrganizationsUseCase,
    CreateOrganizationUseCase,
    GetOrganizationUseCase,
    UpdateOrganizationUseCase,
    DeleteOrganizationUseCase,
    ListMembersUseCase,
    SetMemberRolesUseCase,
    RemoveMemberUseCase,
    ListInvitationsUseCase,
    CreateInvitationUseCase,
    RevokeInvitationUseCase,
    AcceptInvitationUseCase,
    ListOwnOrganizationsUseCase,
    SetActiveOrganizationUseCase,
  ],
  exports: [OrganizationAccess],
})
export class OrganizationsModule {}
