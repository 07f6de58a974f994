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
