import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { MfaMethod, User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { SignInHooks } from '../ports/sign-in-hooks';
import { Transaction } from '../ports/transaction';
import { SignInRefusedError, UserRepository } from '../ports/user.repository';
import { ClientContext } from './client-context';
import { DeviceObservation, DeviceObserver } from './device-observation';
import { DpopRequest } from './dpop-binding';
import { MfaChallenges, SignInMethod } from './mfa-challenges';
import { RealmClaims, SessionIssuer, TokenSet } from './session-issuer';
import { accountLocked } from './wrong-password';

export type { SignInMethod } from './mfa-challenges';

/** A first factor proven: who, from where, and what it adds to the session. */
export interface ProvenFirstFactor {
  realm: Realm;
  /** The account as read when the factor was checked. */
  user: User;
  client: ClientContext;
  /** What the factor proved, for the token's `amr` (RFC 8176): `["pwd"]`, `["fed"]`, `["hwk", "mfa"]`, `["email"]`. */
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
  /** Audited with the sign-in's events (the provider's alias…), and kept with an MFA challenge. */
  details?: Record<string, unknown>;
  /** Audited with a refusal that comes after the factor was proven (a password: `{passwordMatched: true}`). */
  provenDetails?: Record<string, unknown>;
  /** The password hash a password was checked against: the sign-in is stored only while it is still the account's. */
  provenPasswordHash?: string;
  /** The realm's `before-sign-in` hook allowed this sign-in already (an identity provider's callback): not asked again. */
  hookAllowed?: boolean;
  /** The OpenID provider's client the sign-in is for, told to the realm's hooks. */
  clientId?: string;
}

export type SignInOutcome =
  | { kind: 'authenticated'; user: User; tokens: TokenSet; sessionId: string }
  | { kind: 'mfa-required'; user: User; mfaToken: string; methods: MfaMethod[] };

type SessionInput = Pick<ProvenFirstFactor, 'realm' | 'user' | 'client' | 'method' | 'details' | 'dpopJkt' | 'provenPasswordHash'> & {
  observation: DeviceObservation;
  /** The new session's id and the realm's claims for its first access token, asked for before the transaction. */
  asked?: { sessionId: string; claims: RealmClaims };
};

const signInFailed = () => new DomainError('INVALID_CREDENTIALS', 'Sign-in failed');

/**
 * Where every way in continues once its first factor is proven: the account's state, the
 * realm's policies, the second step for users with MFA, then the session (fingerprint, DPoP
 * binding), the sign-in stamp and the audit trail that webhooks follow. Each factor supplies
 * only its proof and its `amr`.
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
    private readonly hooks: SignInHooks,
  ) {}

  /**
   * What every way in reads of its request before its factor is checked, so that neither a
   * malformed fingerprint nor a bad DPoP proof costs the user a code, a challenge or a try: the
   * request's device, and the DPoP key a new session will be bound to (null without a proof).
   * @throws DomainError VALIDATION_FAILED (malformed fingerprint) | INVALID_DPOP_PROOF
   */
  async begin(
    client: ClientContext,
    dpop: DpopRequest | null | undefined,
  ): Promise<{ now: Date; observation: DeviceObservation; dpopJkt: string | null }> {
    const now = this.clock.now();
    const observation = this.devices.observe(client);
    const dpopJkt = await this.issuer.bindingKey(dpop, now);
    return { now, observation, dpopJkt };
  }

  /**
   * @throws DomainError ACCOUNT_LOCKED | ACCOUNT_SUSPENDED | EMAIL_NOT_VERIFIED | INVALID_CREDENTIALS (the
   *   factor's write lost a race, or the account is gone) | VALIDATION_FAILED (malformed fingerprint)
   */
  async continue(input: ProvenFirstFactor, lostRace = 'concurrent_use'): Promise<SignInOutcome> {
    const { realm, user, client } = input;
    const now = this.clock.now();
    const observation = input.observation ?? this.devices.observe(client);
    await this.assertMaySignIn(input, user, now);
    // The realm's own decision, once per sign-in, before a second step or a session exists.
    const decision =
      !input.hookAllowed &&
      this.hooks.beforeSignIn({
        realm,
        user,
        method: input.method,
        amr: input.amr,
        ip: client.ip,
        userAgent: client.userAgent ?? null,
        ...(typeof input.details?.provider === 'string' ? { provider: input.details.provider } : {}),
        ...(input.clientId ? { clientId: input.clientId } : {}),
      });
    if (decision) await decision;
    const commitFactor = async () => {
      if (input.commit && !(await input.commit())) {
        await this.refused({ ...input, user }, now, { reason: lostRace });
        throw signInFailed();
      }
    };
    if (user.mfaEnabled && !input.multiFactor) {
      // No session yet: it is opened when the second factor succeeds — and no challenge for an
      // account that concurrent attempts locked (or an administrator suspended) meanwhile.
      const current = await this.users.findById(realm.id, user.id);
      if (!current?.canAuthenticate(now)) return this.refuseChanged(input, now, current);
      const mfaToken = await this.tx.run(async () => {
        await commitFactor();
        const { amr, method, details } = input;
        return this.mfaChallenges.create({ realm, user, client, purpose: 'login', amr, method, details, now });
      });
      return { kind: 'mfa-required', user, mfaToken, methods: user.mfaMethods };
    }
    // The realm's claims before the transaction: the call waits on the realm's backend, holding no connection.
    const sessionId = crypto.randomUUID();
    const askedClaims = this.issuer.askClaims(realm, user, sessionId, input.amr);
    const asked = { sessionId, claims: askedClaims ? await askedClaims : null };
    const session = { ...input, observation, asked };
    // Without a write of the factor's own: one statement instead of BEGIN, four writes and COMMIT.
    const write = input.commit
      ? this.tx.run(async () => {
          await commitFactor();
          return this.openSession(session, input.amr, now);
        })
      : this.tx.batch(() => this.openSession(session, input.amr, now));
    // Locked or suspended while the factor was checked: nothing was stored.
    const opened = await write.catch((error: unknown) =>
      error instanceof SignInRefusedError ? this.refuseChanged(input, now) : Promise.reject(error),
    );
    return { kind: 'authenticated', user, tokens: opened.tokens, sessionId: opened.session.id };
  }

  /**
   * The session of a sign-in whose factors are all proven (`amr`: the first factor's, then the
   * second's when one was asked): the sign-in stamp, the session, `mfa.succeeded` (with
   * `mfaDetails`, after a second factor) and `login.succeeded`. Call inside the sign-in's
   * transaction or batch.
   * @throws SignInRefusedError when the account was locked or suspended meanwhile, or lost the
   *   password the sign-in proved (nothing is stored)
   */
  async openSession(input: SessionInput, amr: string[], now: Date, mfaDetails?: Record<string, unknown>) {
    const { realm, user, client } = input;
    await this.users.recordSuccessfulLogin(realm.id, user.id, now, input.provenPasswordHash);
    const opened = await this.issuer.open({
      realm,
      user,
      client,
      observation: input.observation,
      amr,
      dpopJkt: input.dpopJkt,
      now,
      ...(input.asked ? { sessionId: input.asked.sessionId, claims: input.asked.claims } : {}),
    });
    const at = { realmId: realm.id, userId: user.id, sessionId: opened.session.id, ip: client.ip, at: now };
    if (mfaDetails) await this.audit.record({ type: 'mfa.succeeded', ...at, details: mfaDetails });
    await this.audit.record({ type: 'login.succeeded', ...at, details: { method: input.method, ...input.details, amr } });
    return opened;
  }

  /**
   * A login whose second factor was just proven (and its write made, in the caller's
   * transaction): the session as `openSession` opens it. An account locked or suspended since the
   * first step is refused with INVALID_TOKEN — the second step's token is worth nothing then — and
   * nothing is stored.
   * @throws DomainError INVALID_TOKEN
   */
  async completeSecondStep(input: SessionInput, amr: string[], now: Date, mfaDetails: Record<string, unknown>) {
    try {
      const { session, tokens } = await this.openSession(input, amr, now, mfaDetails);
      return { sessionId: session.id, tokens };
    } catch (error) {
      if (error instanceof SignInRefusedError) throw new DomainError('INVALID_TOKEN', 'The MFA token is invalid');
      throw error;
    }
  }

  /** Audits a refused sign-in of this factor (`login.failed`), outside any transaction of the caller's. */
  async refused(
    input: Pick<ProvenFirstFactor, 'realm' | 'client' | 'method' | 'details'> & { user?: Pick<User, 'id'> | null },
    at: Date,
    details: Record<string, unknown>,
  ) {
    await this.audit.record({
      type: 'login.failed',
      realmId: input.realm.id,
      userId: input.user?.id ?? null,
      ip: input.client.ip,
      at,
      details: { method: input.method, ...input.details, ...details },
    });
  }

  /** The account states and the realm's policies, told only to whoever proved the factor. */
  private async assertMaySignIn(input: ProvenFirstFactor, user: User, now: Date): Promise<void> {
    const status = user.statusAt(now);
    if (status === 'locked') {
      await this.refused({ ...input, user }, now, { reason: 'locked', ...input.provenDetails });
      throw accountLocked(user, now);
    }
    if (status === 'suspended') {
      await this.refused({ ...input, user }, now, { reason: 'suspended' });
      throw new DomainError('ACCOUNT_SUSPENDED', 'This account is suspended');
    }
    // Only after the factor: without it, nobody learns whether an address is verified.
    if (!user.emailVerified && input.realm.policy.requiresVerifiedEmail) {
      await this.refused({ ...input, user }, now, { reason: 'email_not_verified' });
      input.realm.policy.assertMaySignIn(user);
    }
  }

  /**
   * Refuses a proven factor whose account changed while it was checked: locked (by concurrent
   * attempts or an administrator) → ACCOUNT_LOCKED, suspended → ACCOUNT_SUSPENDED, gone → 401.
   * `read`: the account as just read, when the caller has it.
   */
  private async refuseChanged(input: ProvenFirstFactor, now: Date, read?: User | null): Promise<never> {
    const { realm, user } = input;
    const current = read === undefined ? await this.users.findById(realm.id, user.id) : read;
    const status = current?.statusAt(now);
    // 'state_changed': unlocked or reactivated again by an administrator since the refusal.
    const reason = !status ? 'unknown_user' : status === 'active' ? 'state_changed' : status;
    await this.refused({ ...input, user }, now, { reason, ...input.provenDetails });
    if (current && status === 'locked') throw accountLocked(current, now);
    if (status === 'suspended') throw new DomainError('ACCOUNT_SUSPENDED', 'This account is suspended');
    throw signInFailed();
  }
}
