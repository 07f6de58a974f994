import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { Email } from '../../domain/user/email';
import { MfaMethod, User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { PasswordHasher } from '../ports/password-hasher';
import { Transaction } from '../ports/transaction';
import { FailedLoginOutcome, SignInRefusedError, UserRepository } from '../ports/user.repository';
import { ClientContext } from './client-context';
import { accountLocked, recordWrongPassword } from './wrong-password';
import { DeviceObserver } from './device-observation';
import { DpopRequest } from './dpop-binding';
import { MfaChallenges } from './mfa-challenges';
import { SessionIssuer, TokenSet } from './session-issuer';

export interface LoginInput {
  realm: Realm;
  email: string;
  password: string;
  client: ClientContext;
  /** The request's DPoP proof: a valid one binds the new session to its key. */
  dpop?: DpopRequest | null;
}

export type LoginResult =
  | { kind: 'authenticated'; user: User; tokens: TokenSet; sessionId: string }
  | { kind: 'mfa-required'; user: User; mfaToken: string; methods: MfaMethod[] };

const invalidCredentials = () => new DomainError('INVALID_CREDENTIALS', 'Invalid email or password');

@Injectable()
export class LoginUseCase {
  constructor(
    private readonly users: UserRepository,
    private readonly hasher: PasswordHasher,
    private readonly issuer: SessionIssuer,
    private readonly devices: DeviceObserver,
    private readonly mfaChallenges: MfaChallenges,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Password login. Unknown email and wrong password fail alike, in the same time.
   * @throws DomainError INVALID_CREDENTIALS | ACCOUNT_SUSPENDED | ACCOUNT_LOCKED | EMAIL_NOT_VERIFIED | VALIDATION_FAILED |
   *   INVALID_DPOP_PROOF
   */
  async execute(input: LoginInput): Promise<LoginResult> {
    const observation = this.devices.observe(input.client);
    // Before the user is looked up: a bad proof is refused alike for every email and password.
    const dpopJkt = await this.issuer.bindingKey(input.dpop, this.clock.now());
    const { realm, client } = input;
    const user = await this.users.findByEmail(realm.id, Email.normalise(input.email));
    if (!user || !user.passwordHash) {
      await this.hasher.verifyDummy(input.password);
      await this.refused(realm, user?.id ?? null, client, this.clock.now(), { reason: user ? 'no_password' : 'unknown_user' });
      throw invalidCredentials();
    }
    const passwordMatches = await this.hasher.verify(input.password, user.passwordHash);
    const now = this.clock.now();
    const status = user.statusAt(now);
    // While locked, right and wrong passwords get the same 423 (accountLocked).
    if (status === 'locked') {
      await this.refused(realm, user.id, client, now, { reason: 'locked', passwordMatched: passwordMatches });
      throw accountLocked(user, now);
    }
    if (!passwordMatches) {
      // Not counted: locked by concurrent attempts while this password was checked, or suspended.
      if (!(await this.recordFailure(realm, user, client, now))) await this.refuseIfLocked(realm, user.id, now);
      throw invalidCredentials();
    }
    if (status === 'suspended') {
      await this.refused(realm, user.id, client, now, { reason: 'suspended' });
      throw new DomainError('ACCOUNT_SUSPENDED', 'This account is suspended');
    }
    // Only after the password: without it, nobody learns whether an address is verified.
    if (!user.emailVerified && realm.policy.requiresVerifiedEmail) {
      await this.refused(realm, user.id, client, now, { reason: 'email_not_verified' });
      realm.policy.assertMaySignIn(user);
    }
    if (user.mfaEnabled) {
      // No session yet: it is opened when the second factor succeeds — and no challenge for an
      // account that concurrent attempts locked (or an administrator suspended) meanwhile.
      const current = await this.users.findById(realm.id, user.id);
      if (!current?.canAuthenticate(now)) await this.refuseChanged(realm, user.id, client, now, current);
      const mfaToken = await this.mfaChallenges.create({ realm, user, client, purpose: 'login', amr: ['pwd'], method: 'password', now });
      return { kind: 'mfa-required', user, mfaToken, methods: user.mfaMethods };
    }
    // Writes only (the lookup is done): one statement instead of BEGIN, four writes and COMMIT.
    // It stores nothing if the account was locked or suspended while the password was checked.
    const { session, tokens } = await this.tx
      .batch(async () => {
        await this.users.recordSuccessfulLogin(realm.id, user.id, now);
        const opened = await this.issuer.open({ realm, user, client, observation, amr: ['pwd'], dpopJkt, now });
        await this.audit.record({
          type: 'login.succeeded',
          realmId: realm.id,
          userId: user.id,
          sessionId: opened.session.id,
          ip: client.ip,
          at: now,
          details: { method: 'password', amr: ['pwd'] },
        });
        return opened;
      })
      .catch((error: unknown) =>
        error instanceof SignInRefusedError ? this.refuseChanged(realm, user.id, client, now) : Promise.reject(error),
      );
    return { kind: 'authenticated', user, tokens, sessionId: session.id };
  }

  /** ACCOUNT_LOCKED when the account is locked now. */
  private async refuseIfLocked(realm: Realm, userId: string, now: Date): Promise<void> {
    const current = await this.users.findById(realm.id, userId);
    if (current?.statusAt(now) === 'locked') throw accountLocked(current, now);
  }

  /**
   * Refuses a right password whose account changed while it was checked: locked (by concurrent
   * attempts or an administrator) → ACCOUNT_LOCKED, suspended → ACCOUNT_SUSPENDED, gone → 401.
   * `read`: the account as just read, when the caller has it.
   */
  private async refuseChanged(realm: Realm, userId: string, client: ClientContext, now: Date, read?: User | null): Promise<never> {
    const current = read === undefined ? await this.users.findById(realm.id, userId) : read;
    const status = current?.statusAt(now);
    // 'state_changed': unlocked or reactivated again by an administrator since the refusal.
    const reason = !status ? 'unknown_user' : status === 'active' ? 'state_changed' : status;
    await this.refused(realm, userId, client, now, { reason, passwordMatched: true });
    if (current && status === 'locked') throw accountLocked(current, now);
    if (status === 'suspended') throw new DomainError('ACCOUNT_SUSPENDED', 'This account is suspended');
    throw invalidCredentials();
  }

  /** Audits a login refused without counting towards the lockout (unknown user, locked, suspended). */
  private refused(realm: Realm, userId: string | null, client: ClientContext, at: Date, details: Record<string, unknown>): Promise<void> {
    return this.audit.record({ type: 'login.failed', realmId: realm.id, userId, ip: client.ip, at, details });
  }

  private recordFailure(realm: Realm, user: User, client: ClientContext, now: Date): Promise<FailedLoginOutcome | null> {
    const { users, audit, tx } = this;
    return recordWrongPassword(
      { users, audit, tx },
      { realm, userId: user.id, ip: client.ip, at: now, details: { reason: 'wrong_password' } },
    );
  }
}
