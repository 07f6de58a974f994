import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'webhooks' })
export class WebhookRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'text' }) url: string;
  @Column({ type: 'text', array: true }) events: string[];
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'boolean' }) enabled: boolean;
  /** Encrypted (SecretCipher), bound to the webhook's id. */
  @Column({ type: 'text' }) secret: string;
  @Column({ type: 'text', name: 'previous_secret', nullable: true }) previousSecret: string | null;
  @Column({ type: 'timestamptz', name: 'previous_secret_expires_at', nullable: true }) previousSecretExpiresAt: Date | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt: Date;
}

@Entity({ name: 'webhook_deliveries' })
export class WebhookDeliveryRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'uuid', name: 'webhook_id' }) webhookId: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'uuid', name: 'event_id' }) eventId: string;
  @Column({ type: 'text' }) type: string;
  @Column({ type: 'text' }) status: string;
  @Column({ type: 'integer' }) attempts: number;
  @Column({ type: 'timestamptz', name: 'next_attempt_at' }) nextAttemptAt: Date;
  @Column({ type: 'timestamptz', name: 'locked_until', nullable: true }) lockedUntil: Date | null;
  @Column({ type: 'integer', name: 'last_status_code', nullable: true }) lastStatusCode: number | null;
  @Column({ type: 'text', name: 'last_error', nullable: true }) lastError: string | null;
  @Column({ type: 'timestamptz', name: 'last_attempt_at', nullable: true }) lastAttemptAt: Date | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'delivered_at', nullable: true }) deliveredAt: Date | null;
}
