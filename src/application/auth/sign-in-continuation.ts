import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { MfaMethod, User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { Transaction } from '../ports/transaction';
import { SignInRefusedError, UserRepository } from '../ports/user.repository';
import { ClientContext } from './client-context';
import { DeviceObservation, DeviceObserver } from './device-observation';
import { MfaChallenges, SignInMethod } from './mfa-challenges';
import { SessionIssuer, TokenSet } from './session-issuer';
import { accountLocked } from './wrong-password';

export type { SignInMethod } from './mfa-challenges';

/** A first factor proven: who, from where, and what it adds to the session. */
export interface ProvenFirstFactor {
  realm: Realm;
  user: User;
  client: ClientContext;
  /** What the factor proved, for the token's `amr` (RFC 8176): `["pwd"]`, `["hwk", "mfa"]`, `["email"]`… */
  amr: string[];
  /** `login.succeeded`'s `details.method`. */
  method: SignInMethod;
  /** The factor is two at once (a passkey: device and PIN or biometric): no second step is asked. */
  multiFactor: boolean;
  /** The request's device, when the factor observed it already (`DeviceObserver.observe`). */
  observation?: DeviceObservation;
  /** The DPoP key thumbprint a new session binds to (`SessionIssuer.bindingKey`, checked before the factor). */
  dpopJkt: string | null;
  /**
   * The factor's own write (a challenge or code used up, a signature counter moved), run first in
   * the sign-in's transaction; false when a concurrent request won it: nothing is stored and the
   * sign-in is refused with `lostRace`.
   */
  commit?: () => Promise<boolean>;
  /** Audited with `login.succeeded`. */
  details?: Record<string, unknown>;
}

export type SignInOutcome =
  | { kind: 'authenticated'; user: User; tokens: TokenSet; sessionId: string }
  | { kind: 'mfa-required'; user: User; mfaToken: string; methods: MfaMethod[] };

/**
 * Where every way in continues once its first factor is proven: the account's state, the
 * realm's policies, the second step for users with MFA, then the session (fingerprint, DPoP
 * binding) and the audit trail. Each factor supplies only its proof and its `amr`.
 */
@Injectable()
export class SignInContinuation {
  constructor(
    private readonly users: UserRepository,
    private readonly issuer: SessionIssuer,
    private readonly devices: DeviceObserver,
    private readonly mfaChallenges: MfaChallenges,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * @throws DomainError ACCOUNT_LOCKED | ACCOUNT_SUSPENDED | EMAIL_NOT_VERIFIED | INVALID_CREDENTIALS (the
   *   factor's write lost a race, or the account is gone) | VALIDATION_FAILED (malformed fingerprint)
   */
  async continue(input: ProvenFirstFactor, lostRace = 'concurrent_use'): Promise<SignInOutcome> {
    const { realm, user, client } = input;
    const now = this.clock.now();
    const observation = input.observation ?? this.devices.observe(client);
    await this.assertMaySignIn(input, user, now);
    const commitFactor = async () => {
      if (input.commit && !(await input.commit())) {
        await this.refused(input, now, { reason: lostRace });
        throw new DomainError('INVALID_CREDENTIALS', 'Sign-in failed');
      }
    };
    if (user.mfaEnabled && !input.multiFactor) {
      const mfaToken = await this.tx.run(async () => {
        await commitFactor();
        return this.mfaChallenges.create({ realm, user, client, purpose: 'login', amr: input.amr, method: input.method, now });
      });
      return { kind: 'mfa-required', user, mfaToken, methods: user.mfaMethods };
    }
    try {
      const { session, tokens } = await this.tx.run(async () => {
        await commitFactor();
        await this.users.recordSuccessfulLogin(realm.id, user.id, now);
        const opened = await this.issuer.open({ realm, user, client, observation, amr: input.amr, dpopJkt: input.dpopJkt, now });
        await this.audit.record({
          type: 'login.succeeded',
          realmId: realm.id,
          userId: user.id,
          sessionId: opened.session.id,
          ip: client.ip,
          at: now,
          details: { method: input.method, amr: input.amr, ...input.details },
        });
        return opened;
      });
      return { kind: 'authenticated', user, tokens, sessionId: session.id };
    } catch (error) {
      if (!(error instanceof SignInRefusedError)) throw error;
      // Locked or suspended while the factor was checked: nothing was stored.
      const current = await this.users.findById(realm.id, user.id);
      await this.assertMaySignIn(input, current, now);
      throw new DomainError('INVALID_CREDENTIALS', 'Sign-in failed');
    }
  }

  /** Audits a refused sign-in of this factor (`login.failed`), outside any transaction of the caller's. */
  async refused(
    input: Pick<ProvenFirstFactor, 'realm' | 'client' | 'method'> & { user?: User | null },
    at: Date,
    details: Record<string, unknown>,
  ) {
    await this.audit.record({
      type: 'login.failed',
      realmId: input.realm.id,
      userId: input.user?.id ?? null,
      ip: input.client.ip,
      at,
      details: { method: input.method, ...details },
    });
  }

  /** The account states (§4) and the realm's policies, told only to whoever proved the factor. */
  private async assertMaySignIn(input: ProvenFirstFactor, user: User | null, now: Date): Promise<void> {
    const status = user?.statusAt(now);
    if (!user || !status) {
      await this.refused(input, now, { reason: 'unknown_user' });
      throw new DomainError('INVALID_CREDENTIALS', 'Sign-in failed');
    }
    if (status === 'locked') {
      await this.refused({ ...input, user }, now, { reason: 'locked' });
      throw accountLocked(user, now);
    }
    if (status === 'suspended') {
      await this.refused({ ...input, user }, now, { reason: 'suspended' });
      throw new DomainError('ACCOUNT_SUSPENDED', 'This account is suspended');
    }
    if (!user.emailVerified && input.realm.policy.requiresVerifiedEmail) {
      await this.refused({ ...input, user }, now, { reason: 'email_not_verified' });
      input.realm.policy.assertMaySignIn(user);
    }
  }
}
