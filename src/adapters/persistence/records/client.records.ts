import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'oauth_clients' })
export class ClientRecord {
  @PrimaryColumn({ type: 'text', name: 'client_id' }) clientId: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'text' }) type: string;
  /** SHA-256 of a confidential client's secret; null for a public client. */
  @Column({ type: 'text', name: 'secret_hash', nullable: true }) secretHash: string | null;
  @Column({ type: 'text', name: 'redirect_uris', array: true }) redirectUris: string[];
  @Column({ type: 'text', name: 'post_logout_redirect_uris', array: true }) postLogoutRedirectUris: string[];
  @Column({ type: 'text', name: 'grant_types', array: true }) grantTypes: string[];
  @Column({ type: 'text', array: true }) scopes: string[];
  /** Identifiers of the realm's resources. */
  @Column({ type: 'text', array: true }) resources: string[];
  @Column({ type: 'boolean', name: 'first_party' }) firstParty: boolean;
  @Column({ type: 'text', name: 'backchannel_logout_uri', nullable: true }) backchannelLogoutUri: string | null;
  @Column({ type: 'text', name: 'token_endpoint_auth_method' }) tokenEndpointAuthMethod: string;
  @Column({ type: 'text', name: 'jwks_uri', nullable: true }) jwksUri: string | null;
  @Column({ type: 'integer', name: 'access_token_ttl_seconds', nullable: true }) accessTokenTtlSeconds: number | null;
  @Column({ type: 'text', name: 'id_token_signed_response_alg' }) idTokenSignedResponseAlg: string;
  @Column({ type: 'text', name: 'registered_by' }) registeredBy: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt: Date;
}

@Entity({ name: 'oauth_resources' })
export class ResourceRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'text' }) identifier: string;
  @Column({ type: 'text' }) name: string;
  /** `[{name, description}]` in the resource's order. */
  @Column({ type: 'jsonb' }) scopes: { name: string; description: string }[];
  @Column({ type: 'integer', name: 'access_token_ttl_seconds', nullable: true }) accessTokenTtlSeconds: number | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt: Date;
}

@Entity({ name: 'initial_access_tokens' })
export class InitialAccessTokenRecord {
  @PrimaryColumn({ type: 'text', name: 'token_hash' }) tokenHash: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'expires_at' }) expiresAt: Date;
  @Column({ type: 'timestamptz', name: 'used_at', nullable: true }) usedAt: Date | null;
}
