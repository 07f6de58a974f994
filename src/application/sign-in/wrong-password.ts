import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { PasswordHasher } from '../ports/password-hasher';
import { Transaction } from '../ports/transaction';
import { FailedLoginOutcome, UserRepository } from '../ports/user.repository';

export interface WrongPasswordDeps {
  users: UserRepository;
  audit: AuditLog;
  tx: Transaction;
}

export interface WrongPasswordInput {
  realm: Realm;
  userId: string;
  ip: string;
  sessionId?: string;
  at: Date;
  details: Record<string, unknown>;
}

/**
 * Counts one wrong password towards the account lockout of the realm's policy (atomically, the
 * account states) and audits `login.failed`, plus `user.locked` when this failure locks the
 * account. Used wherever a password is checked: login, password change, factor removal.
 * Null when nothing was counted: the account is locked (maybe by a concurrent attempt since it
 * was read) or suspended.
 */
export async function recordWrongPassword(deps: WrongPasswordDeps, input: WrongPasswordInput): Promise<FailedLoginOutcome | null> {
  const { users, audit, tx } = deps;
  const realmId = input.realm.id;
  const lockout = input.realm.policy.lockout;
  return tx.run(async () => {
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
    return outcome;
  });
}

/**
 * The answer to every password, right or wrong, while the account is locked: answering wrong
 * ones 401 would let guessing go on through the lock, with the other answer confirming the right
 * password. `Retry-After` when the lock is temporary.
 */
export function accountLocked(user: User, now: Date): DomainError {
  const retryAfter = user.lockRemainingSeconds(now);
  return new DomainError(
    'ACCOUNT_LOCKED',
    retryAfter
      ? 'This account is temporarily locked after too many failed logins'
      : 'This account is locked; an administrator must unlock it',
    retryAfter ? { retryAfterSeconds: retryAfter } : {},
  );
}

/**
 * Checks the password of a signed-in account (password change, factor removal) under the
 * lockout, as a login does: a wrong one counts towards it, and while the account is locked —
 * also when other attempts locked it during this check — every password gets ACCOUNT_LOCKED.
 * @throws DomainError ACCOUNT_LOCKED | INVALID_CREDENTIALS (with `wrongMessage`)
 */
export async function confirmPasswordUnderLockout(
  deps: WrongPasswordDeps & { hasher: PasswordHasher },
  input: Omit<WrongPasswordInput, 'userId'> & { user: User; password: string; wrongMessage: string },
): Promise<void> {
  const { user, at } = input;
  const matches = user.passwordHash
    ? await deps.hasher.verify(input.password, user.passwordHash)
    : await deps.hasher.verifyDummy(input.password);
  // Audited like a login into a locked account: whether the password matched stays on record.
  const refuseLocked = async (locked: User): Promise<never> => {
    await deps.audit.record({
      type: 'login.failed',
      realmId: input.realm.id,
      userId: user.id,
      ...(input.sessionId ? { sessionId: input.sessionId } : {}),
      ip: input.ip,
      at,
      details: { ...input.details, reason: 'locked', passwordMatched: matches },
    });
    throw accountLocked(locked, at);
  };
  if (user.statusAt(at) === 'locked') await refuseLocked(user);
  if (!matches && (await recordWrongPassword(deps, { ...input, userId: user.id }))) {
    throw new DomainError('INVALID_CREDENTIALS', input.wrongMessage);
  }
  // Right, or wrong but not counted: is the account locked now?
  const current = await deps.users.findById(input.realm.id, user.id);
  if (current?.statusAt(at) === 'locked') await refuseLocked(current);
  if (!matches) throw new DomainError('INVALID_CREDENTIALS', input.wrongMessage);
}
