import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A role a realm defined (built-in roles are not stored). */
@Entity({ name: 'realm_roles' })
export class RoleRecord {
  @PrimaryColumn({ type: 'text', name: 'realm_id' }) realmId: string;
  @PrimaryColumn({ type: 'text' }) name: string;
  @Column({ type: 'text', nullable: true }) description: string | null;
  @Column({ type: 'timestamptz', name: 'created_at' }) createdAt: Date;
}
