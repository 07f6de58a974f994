import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { RecentAuthentication } from '../sign-in/recent-authentication';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { LinkedIdentityRepository } from '../ports/linked-identity.repository';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';

export type UnlinkIdentityInput = {
  realmId: string;
  userId: string;
  identityId: string;
  ip: string | null;
} & (
  | {
      /** The user's own unlink, from this session (a flagged one may not). */
      sessionId: string;
      adminId?: undefined;
    }
  | {
      /** An administrator's unlink: not limited by the last-way-in rule. */
      adminId: string;
      sessionId?: undefined;
    }
);

@Injectable()
export class UnlinkIdentityUseCase {
  constructor(
    private readonly identities: LinkedIdentityRepository,
    private readonly users: UserRepository,
    private readonly credentials: MfaCredentialRepository,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly recentSignIn: RecentAuthentication,
  ) {}

  /**
   * Unlinks one of the user's identities. A user may not remove their last way to sign in (no
   * password, no other identity, no passkey); an administrator may. A user's flagged session
   * unlinks nothing (`RecentAuthentication.requireUnflagged`).
   * @throws DomainError NOT_FOUND (not the user's) | INVALID_USER_STATE (the last way in) | USER_NOT_FOUND |
   *   FORBIDDEN (a flagged session) | INVALID_TOKEN
   */
  async execute(input: UnlinkIdentityInput): Promise<void> {
    if (input.sessionId !== undefined) {
      await this.recentSignIn.requireUnflagged(input.realmId, input.sessionId, 'Unlinking an identity');
    }
    const now = this.clock.now();
    await this.tx.run(async () => {
      // The row lock orders this against a concurrent unlink of the other way in.
      const user = await this.users.findByIdForUpdate(input.realmId, input.userId);
      if (!user) throw new DomainError('USER_NOT_FOUND', 'User not found');
      const identities = await this.identities.listForUser(input.realmId, user.id);
      const identity = identities.find((i) => i.id === input.identityId);
      if (!identity) throw new DomainError('NOT_FOUND', 'Linked identity not found');
      if (!input.adminId && !user.hasPassword && identities.length === 1) {
        // A disabled passkey (its counter went back) signs nobody in: it is no way in.
        const passkeys = (await this.credentials.listWebauthn(user.id)).filter((c) => c.passkey && !c.disabledAt);
        if (passkeys.length === 0) {
          throw new DomainError('INVALID_USER_STATE', 'This is the account’s last way to sign in: set a password or add a passkey first');
        }
      }
      await this.identities.delete(input.realmId, user.id, identity.id);
      await this.audit.record({
        type: 'identity.unlinked',
        realmId: input.realmId,
        userId: user.id,
        actorId: input.adminId ?? null,
        ip: input.ip,
        at: now,
        details: { provider: identity.provider, identityId: identity.id },
      });
    });
  }
}
