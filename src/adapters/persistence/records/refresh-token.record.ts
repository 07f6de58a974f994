import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'refresh_tokens' })
export class RefreshTokenRecord {
  @PrimaryColumn({ type: 'text', name: 'token_hash' }) tokenHash: string;
  @Column({ type: 'uuid', name: 'session_id' }) sessionId: string;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'rotated_at', nullable: true }) rotatedAt: Date | null;
}
