import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal } from '../../../application/auth/authenticate.use-case';
import { AcceptInvitationUseCase } from '../../../application/organizations/accept-invitation.use-case';
import { CreateInvitationUseCase } from '../../../application/organizations/create-invitation.use-case';
import { ListInvitationsUseCase } from '../../../application/organizations/list-invitations.use-case';
import { ListMembersUseCase } from '../../../application/organizations/list-members.use-case';
import { ListOwnOrganizationsUseCase } from '../../../application/organizations/list-own-organizations.use-case';
import { OrganizationRequester } from '../../../application/organizations/organization-access';
import { RemoveMemberUseCase } from '../../../application/organizations/remove-member.use-case';
import { RevokeInvitationUseCase } from '../../../application/organizations/revoke-invitation.use-case';
import { SetActiveOrganizationUseCase } from '../../../application/organizations/set-active-organization.use-case';
import { SetMemberRolesUseCase } from '../../../application/organizations/set-member-roles.use-case';
import { Clock } from '../../../application/ports/clock';
import { Realm } from '../../../domain/realm/realm';
import { CurrentPrincipal, CurrentRealm, RateLimit } from '../decorators';
import { PageQuery } from '../dto/admin.dto';
import { EmptyBodyDto } from '../dto/empty-body.dto';
import { AcceptInvitationDto, ActiveOrganizationDto, CreateInvitationDto, MemberRolesDto } from '../dto/organization.dto';
import { ApiErrors } from '../openapi/api-errors.decorator';
import {
  ActiveOrganizationResponse,
  InvitationResponse,
  InvitationsResponse,
  MemberResponse,
  MembershipResponse,
  MembershipsResponse,
  MembersPage,
} from '../openapi/organization-schemas';
import { SuccessResponse } from '../openapi/schemas';
import { presentOrganizations } from '../organization-presenters';
import { present } from '../presenters';
import { AppRequest, clientIp } from '../request-context';

const asUser = (principal: Principal, req: AppRequest): OrganizationRequester => ({
  kind: 'user',
  userId: principal.sub,
  realmId: principal.realm,
  ip: clientIp(req),
});

/**
 * The caller's organizations, and for an organization's own administrators (`org-admin`) its
 * members and invitations. Who may do what is decided by the same rule as over the admin API.
 */
@ApiTags('auth')
@ApiBearerAuth()
@Controller('api/v1/auth/organizations')
export class OrganizationsController {
  constructor(
    private readonly listOwn: ListOwnOrganizationsUseCase,
    private readonly acceptInvitation: AcceptInvitationUseCase,
    private readonly setActive: SetActiveOrganizationUseCase,
    private readonly listMembers: ListMembersUseCase,
    private readonly setMemberRoles: SetMemberRolesUseCase,
    private readonly removeMember: RemoveMemberUseCase,
    private readonly listInvitations: ListInvitationsUseCase,
    private readonly createInvitation: CreateInvitationUseCase,
    private readonly revokeInvitation: RevokeInvitationUseCase,
    private readonly clock: Clock,
  ) {}

  @ApiOperation({ summary: 'The caller’s memberships, with their organization roles' })
  @ApiOkResponse({ type: MembershipsResponse })
  @Get()
  async list(@CurrentPrincipal() principal: Principal, @CurrentRealm() realm: Realm) {
    const organizations = await this.listOwn.execute({ realmId: realm.id, userId: principal.sub });
    return { organizations: organizations.map(presentOrganizations.membership) };
  }

  @ApiOperation({ summary: 'Accept an invitation: the caller’s verified address must be the invited one' })
  @ApiOkResponse({ type: MembershipResponse })
  @ApiErrors('INVALID_VERIFICATION_TOKEN', 'FORBIDDEN', 'VALIDATION_FAILED', 'RATE_LIMITED')
  @RateLimit('invitationAccept')
  @Post('invitations/accept')
  @HttpCode(200)
  async accept(
    @Body() body: AcceptInvitationDto,
    @CurrentPrincipal() principal: Principal,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
  ) {
    const organization = await this.acceptInvitation.execute({
      realmId: realm.id,
      userId: principal.sub,
      ip: clientIp(req),
      token: body.token,
    });
    return { organization: presentOrganizations.membership(organization) };
  }

  @ApiOperation({
    summary: 'Make one of the caller’s organizations the session’s active one (null: none): a new access token with the org claim',
  })
  @ApiOkResponse({ type: ActiveOrganizationResponse })
  @ApiErrors('FORBIDDEN', 'VALIDATION_FAILED')
  @Post('active')
  @HttpCode(200)
  async active(@Body() body: ActiveOrganizationDto, @CurrentPrincipal() principal: Principal, @CurrentRealm() realm: Realm) {
    const tokens = await this.setActive.execute({
      realm,
      user: principal.user,
      sessionId: principal.sid,
      organizationId: body.organizationId,
    });
    return { tokens: { accessToken: tokens.accessToken, expiresIn: tokens.expiresIn, tokenType: tokens.tokenType } };
  }

  @ApiOperation({ summary: 'The organization’s members (org-admins only)' })
  @ApiOkResponse({ type: MembersPage })
  @ApiErrors('FORBIDDEN', 'ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED')
  @Get(':id/members')
  async members(
    @Param('id') id: string,
    @Query() query: PageQuery,
    @CurrentPrincipal() principal: Principal,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
  ) {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    const { members, total } = await this.listMembers.execute({
      requester: asUser(principal, req),
      realmId: realm.id,
      organizationId: id,
      page,
      limit,
    });
    return { members: members.map(presentOrganizations.member), pagination: present.pagination(total, page, limit) };
  }

  @ApiOperation({ summary: 'Set a member’s organization roles (org-admins only)' })
  @ApiOkResponse({ type: MemberResponse })
  @ApiErrors('FORBIDDEN', 'ORGANIZATION_NOT_FOUND', 'USER_NOT_FOUND', 'VALIDATION_FAILED', 'INVALID_USER_STATE')
  @Put(':id/members/:userId')
  async setMember(
    @Param('id') id: string,
    @Param('userId') userId: string,
    @Body() body: MemberRolesDto,
    @CurrentPrincipal() principal: Principal,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
  ) {
    const member = await this.setMemberRoles.execute({
      requester: asUser(principal, req),
      realmId: realm.id,
      organizationId: id,
      userId,
      roles: body.roles,
    });
    return { member: presentOrganizations.member(member) };
  }

  @ApiOperation({ summary: 'Remove a member (org-admins only)' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('FORBIDDEN', 'ORGANIZATION_NOT_FOUND', 'USER_NOT_FOUND', 'INVALID_USER_STATE', 'VALIDATION_FAILED')
  @Delete(':id/members/:userId')
  @HttpCode(200)
  async removeMemberRoute(
    @Param('id') id: string,
    @Param('userId') userId: string,
    @Body() _body: EmptyBodyDto,
    @CurrentPrincipal() principal: Principal,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
  ) {
    await this.removeMember.execute({ requester: asUser(principal, req), realmId: realm.id, organizationId: id, userId });
    return { success: true };
  }

  @ApiOperation({ summary: 'The organization’s pending invitations (org-admins only)' })
  @ApiOkResponse({ type: InvitationsResponse })
  @ApiErrors('FORBIDDEN', 'ORGANIZATION_NOT_FOUND')
  @Get(':id/invitations')
  async invitations(
    @Param('id') id: string,
    @CurrentPrincipal() principal: Principal,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
  ) {
    const invitations = await this.listInvitations.execute({ requester: asUser(principal, req), realmId: realm.id, organizationId: id });
    const now = this.clock.now();
    return { invitations: invitations.map((invitation) => presentOrganizations.invitation(invitation, now)) };
  }

  @ApiOperation({ summary: 'Invite an address with organization roles (org-admins only)' })
  @ApiCreatedResponse({ type: InvitationResponse })
  @ApiErrors('FORBIDDEN', 'ORGANIZATION_NOT_FOUND', 'VALIDATION_FAILED')
  @Post(':id/invitations')
  @HttpCode(201)
  async invite(
    @Param('id') id: string,
    @Body() body: CreateInvitationDto,
    @CurrentPrincipal() principal: Principal,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
  ) {
    const invitation = await this.createInvitation.execute({ requester: asUser(principal, req), realm, organizationId: id, ...body });
    return { invitation: presentOrganizations.invitation(invitation, this.clock.now()) };
  }

  @ApiOperation({ summary: 'Revoke a pending invitation (org-admins only)' })
  @ApiOkResponse({ type: SuccessResponse })
  @ApiErrors('FORBIDDEN', 'ORGANIZATION_NOT_FOUND', 'NOT_FOUND', 'VALIDATION_FAILED')
  @Delete(':id/invitations/:invitationId')
  @HttpCode(200)
  async revoke(
    @Param('id') id: string,
    @Param('invitationId') invitationId: string,
    @Body() _body: EmptyBodyDto,
    @CurrentPrincipal() principal: Principal,
    @CurrentRealm() realm: Realm,
    @Req() req: AppRequest,
  ) {
    await this.revokeInvitation.execute({ requester: asUser(principal, req), realmId: realm.id, organizationId: id, invitationId });
    return { success: true };
  }
}
