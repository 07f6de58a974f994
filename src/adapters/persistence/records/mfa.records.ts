import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'totp_credentials' })
export class TotpCredentialRecord {
  @PrimaryColumn({ type: 'uuid', name: 'user_id' }) userId: string;
  @Column({ type: 'text', name: 'secret_encrypted' }) secretEncrypted: string;
  @Column({ type: 'timestamptz', name: 'confirmed_at', nullable: true }) confirmedAt: Date | null;
  @Column({ type: 'bigint', name: 'last_used_step' }) lastUsedStep: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}

@Entity({ name: 'webauthn_credentials' })
export class WebauthnCredentialRecord {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ type: 'uuid', name: 'user_id' }) userId: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'bytea', name: 'public_key' }) publicKey: Buffer;
  @Column({ type: 'bigint' }) counter: string;
  @Column({ type: 'text', array: true }) transports: string[];
  @Column({ type: 'text', name: 'device_type', nullable: true }) deviceType: string | null;
  @Column({ type: 'boolean', name: 'backed_up' }) backedUp: boolean;
  @Column({ type: 'boolean' }) passkey: boolean;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true }) lastUsedAt: Date | null;
  @Column({ type: 'timestamptz', name: 'disabled_at', nullable: true }) disabledAt: Date | null;
  @Column({ type: 'text', name: 'disabled_reason', nullable: true }) disabledReason: string | null;
}

@Entity({ name: 'recovery_codes' })
export class RecoveryCodeRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'uuid', name: 'user_id' }) userId: string;
  @Column({ type: 'text', name: 'code_hash' }) codeHash: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'used_at', nullable: true }) usedAt: Date | null;
}
