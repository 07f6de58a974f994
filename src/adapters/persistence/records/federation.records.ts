import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'identity_providers' })
export class IdentityProviderRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'text' }) alias: string;
  @Column({ type: 'text', name: 'display_name' }) displayName: string;
  @Column({ type: 'text' }) issuer: string;
  @Column({ type: 'text', name: 'client_id' }) clientId: string;
  /** Encrypted (SecretCipher), bound to the provider's id; null for a public client. */
  @Column({ type: 'text', name: 'client_secret', nullable: true }) clientSecret: string | null;
  @Column({ type: 'text', array: true }) scopes: string[];
  @Column({ type: 'boolean' }) enabled: boolean;
  @Column({ type: 'boolean', name: 'trust_email_verified' }) trustEmailVerified: boolean;
  @Column({ type: 'jsonb' }) metadata: object;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt: Date;
}

@Entity({ name: 'user_identities' })
export class UserIdentityRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'uuid', name: 'user_id' }) userId: string;
  @Column({ type: 'uuid', name: 'provider_id' }) providerId: string;
  @Column({ type: 'text' }) subject: string;
  @Column({ type: 'text', nullable: true }) email: string | null;
  @Column({ type: 'timestamptz', name: 'linked_at' }) linkedAt: Date;
  @Column({ type: 'timestamptz', name: 'last_used_at', nullable: true }) lastUsedAt: Date | null;
}

@Entity({ name: 'federation_tokens' })
export class FederationTokenRecord {
  @PrimaryColumn({ type: 'text', name: 'token_hash' }) tokenHash: string;
  @Column({ type: 'text' }) kind: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'uuid', name: 'provider_id' }) providerId: string;
  @Column({ type: 'jsonb' }) payload: object;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'expires_at' }) expiresAt: Date;
  @Column({ type: 'timestamptz', name: 'used_at', nullable: true }) usedAt: Date | null;
}
