import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'server_secrets' })
export class ServerSecretRecord {
  @PrimaryColumn({ type: 'text' }) name: string;
  @Column({ type: 'text' }) value: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
