import { AppConfig } from '../../config/app-config';
import { AuditLog } from '../ports/audit-log';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';

export interface WrongPasswordDeps {
  users: UserRepository;
  audit: AuditLog;
  tx: Transaction;
  config: AppConfig;
}

/**
 * Counts one wrong password towards the account lockout (atomically, the account states) and audits
 * `login.failed`, plus `user.locked` when this failure locks the account. Used wherever a
 * password is checked: login, password change, factor removal.
 */
export async function recordWrongPassword(
  deps: WrongPasswordDeps,
  input: { realmId: string; userId: string; ip: string; sessionId?: string; at: Date; details: Record<string, unknown> },
): Promise<void> {
  const { users, audit, tx, config } = deps;
  await tx.run(async () => {
    const outcome = await users.recordFailedLogin(
      input.realmId,
      input.userId,
      { maxFailures: config.lockoutMaxFailures, durationSeconds: config.lockoutDurationSeconds },
      input.at,
    );
    await audit.record({
      type: 'login.failed',
      realmId: input.realmId,
      userId: input.userId,
      ...(input.sessionId ? { sessionId: input.sessionId } : {}),
      ip: input.ip,
      at: input.at,
      details: { ...input.details, failures: outcome?.failures ?? null },
    });
    if (outcome?.lockedNow) {
      await audit.record({
        type: 'user.locked',
        realmId: input.realmId,
        userId: input.userId,
        ip: input.ip,
        at: input.at,
        details: { failures: outcome.failures, durationSeconds: config.lockoutDurationSeconds },
      });
    }
  });
}
