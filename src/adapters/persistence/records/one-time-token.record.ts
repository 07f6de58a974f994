import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'one_time_tokens' })
export class OneTimeTokenRecord {
  @PrimaryColumn({ type: 'text', name: 'token_hash' }) tokenHash: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'uuid', name: 'user_id', nullable: true }) userId: string | null;
  @Column({ type: 'text' }) kind: string;
  @Column({ type: 'text', nullable: true }) email: string | null;
  @Column({ type: 'jsonb' }) payload: object;
  @Column({ type: 'integer' }) attempts: number;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'expires_at' }) expiresAt: Date;
  @Column({ type: 'timestamptz', name: 'used_at', nullable: true }) usedAt: Date | null;
}
