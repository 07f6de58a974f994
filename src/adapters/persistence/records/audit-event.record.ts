import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'audit_events' })
export class AuditEventRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'text' }) type: string;
  @Column({ type: 'uuid', name: 'user_id', nullable: true }) userId: string | null;
  @Column({ type: 'uuid', name: 'actor_id', nullable: true }) actorId: string | null;
  @Column({ type: 'uuid', name: 'session_id', nullable: true }) sessionId: string | null;
  @Column({ type: 'text', nullable: true }) ip: string | null;
  @Column({ type: 'timestamptz' }) at: Date;
  @Column({ type: 'jsonb' }) details: object;
}
