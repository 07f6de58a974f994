import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';

export interface WrongPasswordDeps {
  users: UserRepository;
  audit: AuditLog;
  tx: Transaction;
}

/**
 * Counts one wrong password towards the account lockout of the realm's policy (atomically, the
 * account states) and audits `login.failed`, plus `user.locked` when this failure locks the
 * account. Used wherever a password is checked: login, password change, factor removal.
 */
export async function recordWrongPassword(
  deps: WrongPasswordDeps,
  input: { realm: Realm; userId: string; ip: string; sessionId?: string; at: Date; details: Record<string, unknown> },
): Promise<void> {
  const { users, audit, tx } = deps;
  const realmId = input.realm.id;
  const lockout = input.realm.policy.lockout;
  await tx.run(async () => {
    const outcome = await users.recordFailedLogin(realmId, input.userId, lockout, input.at);
    await audit.record({
      type: 'login.failed',
      realmId,
      userId: input.userId,
      ...(input.sessionId ? { sessionId: input.sessionId } : {}),
      ip: input.ip,
      at: input.at,
      details: { ...input.details, failures: outcome?.failures ?? null },
    });
    if (outcome?.lockedNow) {
      await audit.record({
        type: 'user.locked',
        realmId,
        userId: input.userId,
        ip: input.ip,
        at: input.at,
        details: { failures: outcome.failures, durationSeconds: lockout.durationSeconds },
      });
    }
  });
}
