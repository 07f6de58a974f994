import {
  MfaCredentialRepository,
  TotpCredential,
  WebauthnCredential,
  WebauthnDisabledReason,
} from '../../src/application/ports/mfa-credential.repository';
import { DomainError } from '../../src/domain/errors';

interface RecoveryCodeRow {
  userId: string;
  codeHash: string;
  usedAt: Date | null;
}

export class InMemoryMfaCredentialRepository extends MfaCredentialRepository {
  readonly totp = new Map<string, TotpCredential>();
  readonly webauthn = new Map<string, WebauthnCredential>();
  recoveryCodes: RecoveryCodeRow[] = [];

  async findTotp(userId: string): Promise<TotpCredential | null> {
    const row = this.totp.get(userId);
    return row ? { ...row } : null;
  }

  async savePendingTotp(credential: TotpCredential): Promise<boolean> {
    if (this.totp.get(credential.userId)?.confirmedAt) return false;
    this.totp.set(credential.userId, { ...credential, confirmedAt: null, lastUsedStep: 0 });
    return true;
  }

  async confirmTotp(userId: string, step: number, now: Date): Promise<boolean> {
    const row = this.totp.get(userId);
    if (!row || row.confirmedAt) return false;
    row.confirmedAt = now;
    row.lastUsedStep = step;
    return true;
  }

  async advanceTotpStep(userId: string, step: number): Promise<boolean> {
    const row = this.totp.get(userId);
    if (!row?.confirmedAt || row.lastUsedStep >= step) return false;
    row.lastUsedStep = step;
    return true;
  }

  async deleteTotp(userId: string): Promise<boolean> {
    return this.totp.delete(userId);
  }

  async listWebauthn(userId: string): Promise<WebauthnCredential[]> {
    return [...this.webauthn.values()]
      .filter((c) => c.userId === userId)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))
      .map((c) => ({ ...c }));
  }

  async findWebauthn(credentialId: string): Promise<WebauthnCredential | null> {
    const row = this.webauthn.get(credentialId);
    return row ? { ...row } : null;
  }

  async insertWebauthn(credential: WebauthnCredential): Promise<void> {
    if (this.webauthn.has(credential.id)) {
      throw new DomainError('VALIDATION_FAILED', 'response names a credential that is already registered', {
        details: [{ field: 'response', message: 'names a credential that is already registered' }],
      });
    }
    this.webauthn.set(credential.id, { ...credential });
  }

  async recordWebauthnUse(credentialId: string, previous: number, counter: number, now: Date): Promise<boolean> {
    const row = this.webauthn.get(credentialId);
    if (!row || row.counter !== previous || row.disabledAt) return false;
    row.counter = counter;
    row.lastUsedAt = now;
    return true;
  }

  async disableWebauthn(credentialId: string, reason: WebauthnDisabledReason, now: Date): Promise<boolean> {
    const row = this.webauthn.get(credentialId);
    if (!row || row.disabledAt) return false;
    row.disabledAt = now;
    row.disabledReason = reason;
    return true;
  }

  async deleteWebauthn(userId: string, credentialId: string): Promise<boolean> {
    const row = this.webauthn.get(credentialId);
    if (!row || row.userId !== userId) return false;
    return this.webauthn.delete(credentialId);
  }

  async replaceRecoveryCodes(userId: string, codeHashes: string[]): Promise<void> {
    this.recoveryCodes = this.recoveryCodes.filter((c) => c.userId !== userId);
    for (const codeHash of codeHashes) this.recoveryCodes.push({ userId, codeHash, usedAt: null });
  }

  async consumeRecoveryCode(userId: string, codeHash: string, now: Date): Promise<boolean> {
    const row = this.recoveryCodes.find((c) => c.userId === userId && c.codeHash === codeHash && !c.usedAt);
    if (!row) return false;
    row.usedAt = now;
    return true;
  }

  async countUnusedRecoveryCodes(userId: string): Promise<number> {
    return this.recoveryCodes.filter((c) => c.userId === userId && !c.usedAt).length;
  }

  async deleteRecoveryCodes(userId: string): Promise<void> {
    this.recoveryCodes = this.recoveryCodes.filter((c) => c.userId !== userId);
  }

  async deleteAllForUser(userId: string): Promise<void> {
    this.totp.delete(userId);
    for (const [id, c] of this.webauthn) if (c.userId === userId) this.webauthn.delete(id);
    await this.deleteRecoveryCodes(userId);
  }
}
