import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'email_outbox' })
export class EmailOutboxRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'text' }) recipient: string;
  @Column({ type: 'text' }) subject: string;
  @Column({ type: 'text', name: 'text_body' }) textBody: string;
  @Column({ type: 'text', name: 'html_body' }) htmlBody: string;
  @Column({ type: 'text' }) status: string;
  @Column({ type: 'integer' }) attempts: number;
  @Column({ type: 'timestamptz', name: 'next_attempt_at' }) nextAttemptAt: Date;
  @Column({ type: 'timestamptz', name: 'locked_until', nullable: true }) lockedUntil: Date | null;
  @Column({ type: 'text', name: 'last_error', nullable: true }) lastError: string | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'sent_at', nullable: true }) sentAt: Date | null;
}
