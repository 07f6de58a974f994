import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A realm; every settings column null means "the deployment default". */
@Entity({ name: 'realms' })
export class RealmRecord {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'boolean', default: true }) enabled: boolean;
  @Column({ type: 'text', name: 'public_url', nullable: true }) publicUrl: string | null;
  @Column({ type: 'text', name: 'webauthn_rp_id', nullable: true }) webauthnRpId: string | null;
  @Column({ type: 'text', name: 'webauthn_rp_name', nullable: true }) webauthnRpName: string | null;
  @Column({ type: 'text', name: 'webauthn_origins', array: true, nullable: true }) webauthnOrigins: string[] | null;
  @Column({ type: 'text', nullable: true }) registration: string | null;
  @Column({ type: 'boolean', name: 'require_verified_email', nullable: true }) requireVerifiedEmail: boolean | null;
  @Column({ type: 'integer', name: 'access_token_ttl_seconds', nullable: true }) accessTokenTtlSeconds: number | null;
  @Column({ type: 'integer', name: 'session_idle_timeout_seconds', nullable: true }) sessionIdleTimeoutSeconds: number | null;
  @Column({ type: 'integer', name: 'session_max_lifetime_seconds', nullable: true }) sessionMaxLifetimeSeconds: number | null;
  @Column({ type: 'integer', name: 'lockout_max_failures', nullable: true }) lockoutMaxFailures: number | null;
  @Column({ type: 'integer', name: 'lockout_duration_seconds', nullable: true }) lockoutDurationSeconds: number | null;
  @Column({ type: 'integer', name: 'password_min_length', nullable: true }) passwordMinLength: number | null;
  @Column({ type: 'double precision', name: 'fingerprint_match_threshold', nullable: true }) fingerprintMatchThreshold: number | null;
  @Column({ type: 'text', name: 'allowed_return_urls', array: true, nullable: true }) allowedReturnUrls: string[] | null;
  @Column({ type: 'text', name: 'client_registration', nullable: true }) clientRegistration: string | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt: Date;
}
