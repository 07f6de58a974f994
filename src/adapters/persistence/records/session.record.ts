import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'sessions' })
export class SessionRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'uuid', name: 'user_id' }) userId: string;
  @Column({ type: 'text', name: 'device_id' }) deviceId: string;
  @Column({ type: 'text', name: 'device_name' }) deviceName: string;
  @Column({ type: 'text', name: 'device_type' }) deviceType: string;
  @Column({ type: 'text', nullable: true }) fingerprint: string | null;
  @Column({ type: 'jsonb', name: 'reference_fingerprint' }) referenceFingerprint: object;
  @Column({ type: 'text' }) ip: string;
  @Column({ type: 'text', nullable: true }) country: string | null;
  @Column({ type: 'text', nullable: true }) city: string | null;
  @Column({ type: 'text', name: 'user_agent', nullable: true }) userAgent: string | null;
  @Column({ type: 'text', array: true }) amr: string[];
  @Column({ type: 'text', name: 'dpop_jkt', nullable: true }) dpopJkt: string | null;
  @Column({ type: 'text' }) status: string;
  @Column({ type: 'text', name: 'flag_reason', nullable: true }) flagReason: string | null;
  @Column({ type: 'double precision', name: 'flag_score', nullable: true }) flagScore: number | null;
  @Column({ type: 'timestamptz', name: 'flagged_at', nullable: true }) flaggedAt: Date | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'last_active_at' }) lastActiveAt: Date;
  @Column({ type: 'timestamptz', name: 'expires_at' }) expiresAt: Date;
  @Column({ type: 'timestamptz', name: 'revoked_at', nullable: true }) revokedAt: Date | null;
  @Column({ type: 'text', name: 'revoke_reason', nullable: true }) revokeReason: string | null;
  /**
   * `active_organization_id`, as the session reads select it; no column of the record, so saving
   * a session never writes it (only `SessionRepository.setActiveOrganization` does).
   */
  activeOrganizationId?: string | null;
}
