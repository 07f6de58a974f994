import { ApiProperty } from '@nestjs/swagger';
import { PaginationView, TokensView } from './schemas';

const AT = { example: '2026-11-25T21:44:00.000Z', format: 'date-time' };
const ID = { example: '0192f1c4-7a2b-7c3d-8e4f-5a6b7c8d9e0f' };

export class OrganizationView {
  @ApiProperty(ID) id: string;
  @ApiProperty({ example: 'Acme Corporation' }) name: string;
  @ApiProperty({ example: 'acme', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' }) slug: string;
  @ApiProperty({
    type: [String],
    example: ['acme.example'],
    description: 'Lower-case DNS names, each in at most one organization of the realm',
  })
  domains: string[];
  @ApiProperty({ type: String, nullable: true, example: null, description: 'Alias of one of the realm’s identity providers' })
  identityProvider: string | null;
  @ApiProperty({ example: false, description: 'Addresses of its domains sign in only through identityProvider' })
  requireIdentityProvider: boolean;
  @ApiProperty({ example: 12 }) memberCount: number;
  @ApiProperty(AT) createdAt: string;
  @ApiProperty(AT) updatedAt: string;
}

export class OrganizationResponse {
  @ApiProperty({ type: OrganizationView }) organization: OrganizationView;
}

export class OrganizationsPage {
  @ApiProperty({ type: [OrganizationView] }) organizations: OrganizationView[];
  @ApiProperty({ type: PaginationView }) pagination: PaginationView;
}

export class MembershipView {
  @ApiProperty(ID) id: string;
  @ApiProperty({ example: 'Acme Corporation' }) name: string;
  @ApiProperty({ example: 'acme' }) slug: string;
  @ApiProperty({ type: [String], example: ['org-admin'], description: 'The caller’s organization roles' }) roles: string[];
}

export class MembershipsResponse {
  @ApiProperty({ type: [MembershipView] }) organizations: MembershipView[];
}

export class MembershipResponse {
  @ApiProperty({ type: MembershipView }) organization: MembershipView;
}

export class MemberView {
  @ApiProperty(ID) userId: string;
  @ApiProperty({ example: 'alice@acme.example' }) email: string;
  @ApiProperty({ type: [String], example: ['org-admin'] }) roles: string[];
  @ApiProperty(AT) joinedAt: string;
}

export class MemberResponse {
  @ApiProperty({ type: MemberView }) member: MemberView;
}

export class MembersPage {
  @ApiProperty({ type: [MemberView] }) members: MemberView[];
  @ApiProperty({ type: PaginationView }) pagination: PaginationView;
}

export class InvitationView {
  @ApiProperty(ID) id: string;
  @ApiProperty({ example: 'bob@acme.example' }) email: string;
  @ApiProperty({ type: [String], example: ['billing'] }) roles: string[];
  @ApiProperty({ enum: ['pending', 'accepted', 'revoked', 'replaced', 'expired'], example: 'pending' }) status: string;
  @ApiProperty({ ...ID, description: 'The user who invited' }) invitedBy: string;
  @ApiProperty(AT) expiresAt: string;
  @ApiProperty(AT) createdAt: string;
}

export class InvitationResponse {
  @ApiProperty({ type: InvitationView }) invitation: InvitationView;
}

export class InvitationsResponse {
  @ApiProperty({ type: [InvitationView] }) invitations: InvitationView[];
}

export class ActiveOrganizationResponse {
  @ApiProperty({ type: TokensView, description: 'A new access token of the same session, with the `org` claim; no refreshToken' })
  tokens: TokensView;
}
