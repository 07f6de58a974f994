import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'realms' })
export class RealmRecord {
  @PrimaryColumn({ type: 'text' }) id: string;
  @Column({ type: 'text' }) name: string;
  @Column({ type: 'integer', name: 'access_token_ttl_seconds', nullable: true }) accessTokenTtlSeconds: number | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
