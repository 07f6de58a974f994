import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminActor } from '../../../application/admin/admin-actor';
import { CreateInvitationUseCase } from '../../../application/organizations/create-invitation.use-case';
import { CreateOrganizationUseCase } from '../../../application/organizations/create-organization.use-case';
import { DeleteOrganizationUseCase } from '../../../application/organizations/delete-organization.use-case';
import { GetOrganizationUseCase } from '../../../application/organizations/get-organization.use-case';
import { ListInvitationsUseCase } from '../../../application/organizations/list-invitations.use-case';
import { ListMembersUseCase } from '../../../application/organizations/list-members.use-case';
import { ListOrganizationsUseCase } from '../../../application/organizations/list-organizations.use-case';
import { OrganizationRequester } from '../../../application/organizations/organization-access';
import { RemoveMemberUseCase } from '../../../application/organizations/remove-member.use-case';
import { RevokeInvitationUseCase } from '../../../application/organizations/revoke-invitation.use-case';
import { SetMemberRolesUseCase } from '../../../application/organizations/set-member-roles.use-case';
import { UpdateOrganizationUseCase } from '../../../application/organizations/update-organization.use-case';
import { Clock } from '../../../application/ports/clock';
import { Realm } from '../../../domain/realm/realm';
import { AdminAction, CurrentRealm, RealmHeader } from '../decorators';
import { PageQuery } from '../dto/admin.dto';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import {
  CreateInvitationDto,
  CreateOrganizationDto,
  ListOrganizationsQuery,
  MemberRolesDto,
  UpdateOrganizationDto,
} from '../dto/organization.dto';
import { CurrentAdmin } from '../guards/admin.guard';
import { ApiErrors } from '../openapi/api-errors.decorator';
import {
  InvitationResponse,
  InvitationsResponse,
  MemberResponse,
  MembersPage,
  OrganizationResponse,
  OrganizationsPage,
} from '../openapi/organization-schemas';
import { SuccessResponse } from '../openapi/schemas';
import { presentOrganizations } from '../organization-presenters';
import { present } from '../presenters';

const asAdmin = (admin: AdminActor): OrganizationRequester => ({ kind: 'admin', admin });

/** The realm's organizations, their members and invitations, for the realm's administrators. */
@ApiTags('admin')
@ApiBearerAuth()
@ApiHeader({ name: 'X-Realm-Id', required: true })
@RealmHeader('required')
@Controller('v1/admin/organizations')
export class AdminOrganizationsController {
  constructor(
    private readonly listOrganizations: ListOrganizationsUseCase,
    private readonly createOrganization: CreateOrganizationUseCase,
    private readonly getOrganization: GetOrganizationUseCase,
    private readonly updateOrganization: UpdateOrganizationUseCase,
    private readonly deleteOrganization: DeleteOrganizationUseCase,
    private readonly listMembers: ListMembersUseCase,
    private readonly setMemberRoles: SetMemberRolesUseCase,
    private readonly removeMember: RemoveMemberUseCase,
    private readonly listInvitations: ListInvitationsUseCase,
    private readonly createInvitation: CreateInvitationUseCase,
    private readonly revokeInvitation: RevokeInvitationUseCase,
    private readonly clock: Clock,
  ) {}

  @ApiOperation({ summary: 'The realm’s organizations, oldest first' })
  @ApiOkResponse({ type: OrganizationsPage })
  @AdminAction('organizations.list')
  @Get()
  async list(@Query() query: ListOrganizationsQuery, @CurrentRealm() realm: Realm) {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    const { organizations, total } = await this.listOrganizations.execute({ realmId: realm.id, page, limit, search: query.search });
    return { organizations: organizations.map(presentOrganizations.organization), pagination: present.pagination(total, page, limit) };
  }

  @ApiOperation({ summary: 'Create an organization' })
  @ApiCreatedResponse({ type: OrganizationResponse })
  @ApiErrors('VALIDATION_FAILED', 'ORGANIZATION_EXISTS')
  @AdminAction('organizations.create')
  @Post()
  @HttpCode(201)
  async create(@Body() body: CreateOrganizationDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const organization = await this.createOrganization.execute({ actor, realmId: realm.id, ...body });
    return { organization: presentOrganizations.organization(organization) };
  }

  @ApiOperation({ summary: 'One organization' })
  @ApiOkResponse({ type: OrganizationResponse })
  @ApiErrors('ORGANIZATION_NOT_FOUND')
  @AdminAction('organization.read')
  @Get(':id')
  async read(@Param('id') id: string, @CurrentRealm() realm: Realm) {
    return { organization: presentOrganizations.organization(await this.getOrganization.execute({ realmId: realm.id, id })) };
  }

  @ApiOperation({ summary: 'Change any field but the id' })
  @ApiOkResponse({ type: OrganizationResponse })
  @ApiErrors('ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED', 'ORGANIZATION_EXISTS')
  @AdminAction('organization.update')
  @Patch(':id')
  async update(
    @Param('id') id: string,
    @Body() body: UpdateOrganizationDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    const organization = await this.updateOrganization.execute({ actor, realmId: realm.id, id, ...body });
    return { organization: presentOrganizations.organization(organization) };
  }

  @ApiOperation({ summary: 'Delete an organization; its memberships and invitations go with it' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('ORGANIZATION_NOT_FOUND')
  @AdminAction('organization.delete')
  @Delete(':id')
  @HttpCode(200)
  async remove(@Param('id') id: string, @Body() _body: EmptyBodyDto, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    await this.deleteOrganization.execute({ actor, realmId: realm.id, id });
    return { success: true };
  }

  @ApiOperation({ summary: 'The organization’s members, in the order they joined' })
  @ApiOkResponse({ type: MembersPage })
  @ApiErrors('ORGANIZATION_NOT_FOUND')
  @AdminAction('organization.members.list')
  @Get(':id/members')
  async members(@Param('id') id: string, @Query() query: PageQuery, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    const { members, total } = await this.listMembers.execute({
      requester: asAdmin(actor),
      realmId: realm.id,
      organizationId: id,
      page,
      limit,
    });
    return { members: members.map(presentOrganizations.member), pagination: present.pagination(total, page, limit) };
  }

  @ApiOperation({ summary: 'Add a user of the realm as a member, or set a member’s organization roles' })
  @ApiOkResponse({ type: MemberResponse })
  @ApiErrors('ORGANIZATION_NOT_FOUND', 'USER_NOT_FOUND', 'VALIDATION_FAILED')
  @AdminAction('organization.member.set-roles')
  @Put(':id/members/:userId')
  async setMember(
    @Param('id') id: string,
    @Param('userId') userId: string,
    @Body() body: MemberRolesDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    const member = await this.setMemberRoles.execute({
      requester: asAdmin(actor),
      realmId: realm.id,
      organizationId: id,
      userId,
      roles: body.roles,
    });
    return { member: presentOrganizations.member(member) };
  }

  @ApiOperation({ summary: 'Remove a member' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('ORGANIZATION_NOT_FOUND', 'USER_NOT_FOUND')
  @AdminAction('organization.member.remove')
  @Delete(':id/members/:userId')
  @HttpCode(200)
  async removeMemberRoute(
    @Param('id') id: string,
    @Param('userId') userId: string,
    @Body() _body: EmptyBodyDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    await this.removeMember.execute({ requester: asAdmin(actor), realmId: realm.id, organizationId: id, userId });
    return { success: true };
  }

  @ApiOperation({ summary: 'The organization’s pending invitations, newest first' })
  @ApiOkResponse({ type: InvitationsResponse })
  @ApiErrors('ORGANIZATION_NOT_FOUND')
  @AdminAction('organization.invitations.list')
  @Get(':id/invitations')
  async invitations(@Param('id') id: string, @CurrentRealm() realm: Realm, @CurrentAdmin() actor: AdminActor) {
    const invitations = await this.listInvitations.execute({ requester: asAdmin(actor), realmId: realm.id, organizationId: id });
    const now = this.clock.now();
    return { invitations: invitations.map((invitation) => presentOrganizations.invitation(invitation, now)) };
  }

  @ApiOperation({ summary: 'Invite an address: an email with a single-use link, valid 7 days, replacing the pending one to that address' })
  @ApiCreatedResponse({ type: InvitationResponse })
  @ApiErrors('ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED')
  @AdminAction('organization.invitations.create')
  @Post(':id/invitations')
  @HttpCode(201)
  async invite(
    @Param('id') id: string,
    @Body() body: CreateInvitationDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    const invitation = await this.createInvitation.execute({ requester: asAdmin(actor), realm, organizationId: id, ...body });
    return { invitation: presentOrganizations.invitation(invitation, this.clock.now()) };
  }

  @ApiOperation({ summary: 'Revoke a pending invitation' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('ORGANIZATION_NOT_FOUND', 'NOT_FOUND')
  @AdminAction('organization.invitation.revoke')
  @Delete(':id/invitations/:invitationId')
  @HttpCode(200)
  async revoke(
    @Param('id') id: string,
    @Param('invitationId') invitationId: string,
    @Body() _body: EmptyBodyDto,
    @CurrentRealm() realm: Realm,
    @CurrentAdmin() actor: AdminActor,
  ) {
    await this.revokeInvitation.execute({ requester: asAdmin(actor), realmId: realm.id, organizationId: id, invitationId });
    return { success: true };
  }
}
