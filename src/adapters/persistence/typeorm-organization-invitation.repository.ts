import { Injectable } from '@nestjs/common';
import { OrganizationInvitationRepository } from '../../application/ports/organization-invitation.repository';
import { Invitation, InvitationState } from '../../domain/organization/invitation';
import { TypeOrmTransaction, unwrapRows } from './typeorm-transaction';
import { isUuid } from './typeorm-user.repository';

const COLUMNS = `id, organization_id AS "organizationId", realm_id AS "realmId", email, roles, token_hash AS "tokenHash",
  invited_by AS "invitedBy", status, created_at AS "createdAt", expires_at AS "expiresAt", ended_at AS "endedAt"`;

type InvitationRow = Omit<InvitationState, 'createdAt' | 'expiresAt' | 'endedAt'> & {
  createdAt: Date | string;
  expiresAt: Date | string;
  endedAt: Date | string | null;
};

function toInvitation(row: InvitationRow): Invitation {
  return Invitation.restore({
    ...row,
    createdAt: new Date(row.createdAt),
    expiresAt: new Date(row.expiresAt),
    endedAt: row.endedAt === null ? null : new Date(row.endedAt),
  });
}

@Injectable()
export class TypeOrmOrganizationInvitationRepository implements OrganizationInvitationRepository {
  constructor(private readonly tx: TypeOrmTransaction) {}

  async insertReplacingPending(invitation: Invitation, now: Date): Promise<void> {
    const s = invitation.snapshot();
    await this.tx.manager.query(
      `UPDATE organization_invitations SET status = 'replaced', ended_at = $3 WHERE organization_id = $1 AND email = $2 AND status = 'pending'`,
      [s.organizationId, s.email, now],
    );
    await this.tx.manager.query(
      `INSERT INTO organization_invitations (id, organization_id, realm_id, email, roles, token_hash, invited_by, status, created_at, expires_at, ended_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [s.id, s.organizationId, s.realmId, s.email, s.roles, s.tokenHash, s.invitedBy, s.status, s.createdAt, s.expiresAt, s.endedAt],
    );
  }

  async findByTokenHash(tokenHash: string): Promise<Invitation | null> {
    const [row] = await this.tx.manager.query<InvitationRow[]>(`SELECT ${COLUMNS} FROM organization_invitations WHERE token_hash = $1`, [
      tokenHash,
    ]);
    return row ? toInvitation(row) : null;
  }

  async listPending(organizationId: string, now: Date): Promise<Invitation[]> {
    if (!isUuid(organizationId)) return [];
    const rows = await this.tx.manager.query<InvitationRow[]>(
      `SELECT ${COLUMNS} FROM organization_invitations WHERE organization_id = $1 AND status = 'pending' AND expires_at > $2
        ORDER BY created_at DESC, id`,
      [organizationId, now],
    );
    return rows.map(toInvitation);
  }

  async accept(id: string, now: Date): Promise<boolean> {
    return this.end(`id = $1`, [id], 'accepted', now);
  }

  async revoke(organizationId: string, id: string, now: Date): Promise<boolean> {
    if (!isUuid(organizationId) || !isUuid(id)) return false;
    return this.end(`id = $1 AND organization_id = $4`, [id], 'revoked', now, organizationId);
  }

  private async end(where: string, params: unknown[], status: 'accepted' | 'revoked', now: Date, ...more: unknown[]): Promise<boolean> {
    const rows = unwrapRows(
      await this.tx.manager.query(
        `UPDATE organization_invitations SET status = $2, ended_at = $3 WHERE ${where} AND status = 'pending' AND expires_at > $3 RETURNING 1`,
        [...params, status, now, ...more],
      ),
    );
    return rows.length > 0;
  }
}
