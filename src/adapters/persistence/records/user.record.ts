import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'users' })
export class UserRecord {
  @PrimaryColumn({ type: 'uuid' }) id: string;
  @Column({ type: 'text', name: 'realm_id' }) realmId: string;
  @Column({ type: 'text' }) email: string;
  @Column({ type: 'boolean', name: 'email_verified' }) emailVerified: boolean;
  @Column({ type: 'text', name: 'password_hash', nullable: true }) passwordHash: string | null;
  @Column({ type: 'text', name: 'first_name' }) firstName: string;
  @Column({ type: 'text', name: 'last_name' }) lastName: string;
  @Column({ type: 'text', nullable: true }) avatar: string | null;
  @Column({ type: 'text' }) status: string;
  @Column({ type: 'timestamptz', name: 'locked_until', nullable: true }) lockedUntil: Date | null;
  @Column({ type: 'integer', name: 'failed_login_count' }) failedLoginCount: number;
  @Column({ type: 'text', array: true }) roles: string[];
  @Column({ type: 'jsonb', name: 'app_metadata' }) appMetadata: object;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
  @Column({ type: 'timestamptz', name: 'updated_at' }) updatedAt: Date;
  @Column({ type: 'timestamptz', name: 'last_login_at', nullable: true }) lastLoginAt: Date | null;
}
