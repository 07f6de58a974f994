import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'signing_keys' })
export class SigningKeyRecord {
  @PrimaryColumn({ type: 'text' }) kid: string;
  @Column({ type: 'text' }) algorithm: string;
  @Column({ type: 'text', name: 'private_key' }) privateKey: string;
  @Column({ type: 'jsonb', name: 'public_jwk' }) publicJwk: object;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'retired_at', nullable: true }) retiredAt: Date | null;
}

/** The RSA keys of ID tokens (RS256), kept and rotated like the access tokens' keys. */
@Entity({ name: 'id_token_keys' })
export class IdTokenKeyRecord {
  @PrimaryColumn({ type: 'text' }) kid: string;
  @Column({ type: 'text' }) algorithm: string;
  @Column({ type: 'text', name: 'private_key' }) privateKey: string;
  @Column({ type: 'jsonb', name: 'public_jwk' }) publicJwk: object;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'retired_at', nullable: true }) retiredAt: Date | null;
}
