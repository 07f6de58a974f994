import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'organizations' })
export class OrganizationRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'text' }) slug: string;
  @Column({ type: 'text', array: true }) domains: string[];
  @Column({ type: 'text', name: 'identity_provider', nullable: true }) identityProvider: string | null;
  @Column({ type: 'boolean', name: 'require_identity_provider' }) requireIdentityProvider: boolean;
  /** Kept by the triggers of organization_members (migration 1764520000000). */
  @Column({ type: 'integer', name: 'member_count' }) memberCount: number;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt: Date;
}

/** One domain of an organization; the key (realm, domain) keeps a domain in one organization of the realm. */
@Entity({ name: 'organization_domains' })
export class OrganizationDomainRecord {
  @PrimaryColumn({ type: 'text', name: 'realm_id' }) realmId: string;
  @PrimaryColumn({ type: 'text' }) domain: string;
  @Column({ type: 'uuid', name: 'organization_id' }) organizationId: string;
}

@Entity({ name: 'organization_members' })
export class OrganizationMemberRecord {
  @PrimaryColumn({ type: 'uuid', name: 'organization_id' }) organizationId: string;
  @PrimaryColumn({ type: 'uuid', name: 'user_id' }) userId: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'text', array: true }) roles: string[];
  @Column({ type: 'timestamptz', name: 'joined_at' }) joinedAt: Date;
}

@Entity({ name: 'organization_invitations' })
export class OrganizationInvitationRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'uuid', name: 'organization_id' }) organizationId: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'text' }) email: string;
  @Column({ type: 'text', array: true }) roles: string[];
  /** SHA-256 of the link's token. */
  @Column({ type: 'text', name: 'token_hash' }) tokenHash: string;
  @Column({ type: 'uuid', name: 'invited_by' }) invitedBy: string;
  @Column({ type: 'text' }) status: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'expires_at' }) expiresAt: Date;
  @Column({ type: 'timestamptz', name: 'ended_at', nullable: true }) endedAt: Date | null;
}
