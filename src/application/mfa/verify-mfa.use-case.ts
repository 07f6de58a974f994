import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { similarity } from '../../domain/session/device-fingerprint';
import { User } from '../../domain/user/user';
import { ClientContext } from '../sign-in/client-context';
import { DeviceObservation, DeviceObserver } from '../sign-in/device-observation';
import { DpopRequest } from '../sign-in/dpop-binding';
import { MFA_TOKEN_MAX_ATTEMPTS, MfaChallenges, PendingLogin } from '../sign-in/mfa-challenges';
import { SignInContinuation } from '../sign-in/sign-in-continuation';
import { SessionIssuer, TokenSet } from '../sign-in/session-issuer';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { OneTimeToken, OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { RefreshTokenRepository } from '../ports/refresh-token.repository';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { openMfaChallenge } from './open-mfa-challenge';
import { FactorCheck, MfaFactorType, refused, SecondFactors } from './second-factors';

export type { MfaFactorType } from './second-factors';

export interface VerifyMfaInput {
  realm: Realm;
  mfaToken: string;
  type: MfaFactorType;
  code: string;
  client: ClientContext;
  /** The request's DPoP proof: at a login's second step, a valid one binds the new session to its key. */
  dpop?: DpopRequest | null;
}

export interface MfaVerified {
  user: User;
  tokens: TokenSet;
  sessionId: string;
  purpose: PendingLogin['purpose'];
}

/** A session's `amr` without the second factor a sign-in appended (`otp` or `hwk` after the first factor's values). */
export function firstFactorAmr(sessionAmr: readonly string[]): string[] {
  const last = sessionAmr.at(-1);
  return sessionAmr.length > 1 && (last === 'otp' || last === 'hwk') ? sessionAmr.slice(0, -1) : [...sessionAmr];
}

const invalidToken = (message = 'The MFA token is invalid') => new DomainError('INVALID_TOKEN', message);

@Injectable()
export class VerifyMfaUseCase {
  constructor(
    private readonly challenges: MfaChallenges,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly users: UserRepository,
    private readonly factors: SecondFactors,
    private readonly issuer: SessionIssuer,
    private readonly continuation: SignInContinuation,
    private readonly sessions: SessionRepository,
    private readonly refreshTokens: RefreshTokenRepository,
    private readonly devices: DeviceObserver,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * The second step of a login, or the re-verification of a flagged session. The mfaToken is single use, dies at the 5th wrong code, and only works from the device
   * it was issued to. A TOTP step and a recovery code are each accepted once, atomically; a
   * WebAuthn challenge is used up by any answer, and a signature counter that goes back is refused
   * and disables the credential (a clone may exist) until its owner removes it.
   * @throws DomainError INVALID_MFA_CODE | INVALID_TOKEN | TOKEN_EXPIRED | VALIDATION_FAILED (malformed fingerprint) |
   *   INVALID_DPOP_PROOF (a bad proof at a login's second step; neither the code nor the mfaToken is spent)
   */
  async execute(input: VerifyMfaInput): Promise<MfaVerified> {
    const { realm } = input;
    const now = this.clock.now();
    const { token, pending } = await openMfaChallenge(this.challenges, realm, input.mfaToken, now);
    // Without a fingerprint of its own, the verifying request is taken to carry the login's.
    const client: ClientContext = { ...input.client, fingerprint: input.client.fingerprint ?? pending.client?.fingerprint ?? null };
    const observation = this.devices.observe(client);

    const user = await this.users.findById(realm.id, token.userId);
    if (!user || !user.canAuthenticate(now)) {
      await this.oneTimeTokens.consume(token.tokenHash, now);
      throw invalidToken();
    }
    await this.assertSameDevice(realm, token, pending, observation, user, client, now);
    // A re-verified session keeps the binding it has; a login binds here, before any factor is spent.
    const dpopJkt = pending.purpose === 'reverify' ? null : await this.issuer.bindingKey(input.dpop, now);

    const check = await this.checkFactor({ realm, user, type: input.type, code: input.code, token, pending, now });
    if (check.ok) {
      // A login's session: the realm's claims for its first token before the transaction (the call waits on the realm's backend).
      const amr = [...(pending.amr ?? ['pwd']), check.amr];
      const sessionId = crypto.randomUUID();
      const askedClaims = pending.purpose !== 'reverify' ? this.issuer.askClaims(realm, user, sessionId, amr) : null;
      const asked = { sessionId, claims: askedClaims ? await askedClaims : null };
      const result = await this.tx.run(async () => {
        if (!(await check.commit())) return null;
        if (!(await this.oneTimeTokens.consume(token.tokenHash, now))) throw invalidToken();
        const mfaDetails = { type: input.type, purpose: pending.purpose, ...check.details };
        if (pending.purpose !== 'reverify') {
          const method = pending.method ?? 'password';
          const second = { realm, user, client, observation, method, details: pending.details, dpopJkt, asked };
          return this.continuation.completeSecondStep(second, amr, now, mfaDetails);
        }
        const outcome = await this.reverify(realm, user, pending, client, observation, check.amr, now);
        await this.audit.record({
          type: 'mfa.succeeded',
          realmId: realm.id,
          userId: user.id,
          sessionId: outcome.sessionId,
          ip: client.ip,
          at: now,
          details: mfaDetails,
        });
        return outcome;
      });
      if (result) return { user, tokens: result.tokens, sessionId: result.sessionId, purpose: pending.purpose };
    }
    let reason = check.ok ? check.lostRace : check.reason;
    let details = check.ok ? {} : (check.details ?? {});
    const attempts = await this.oneTimeTokens.recordFailedAttempt(token.tokenHash, now, MFA_TOKEN_MAX_ATTEMPTS);
    await this.tx.run(async () => {
      const settled = !check.ok && check.settle ? await check.settle() : null;
      if (settled) ({ reason, details } = settled);
      await this.audit.record({
        type: 'mfa.failed',
        realmId: realm.id,
        userId: user.id,
        sessionId: pending.sessionId ?? null,
        ip: client.ip,
        at: now,
        details: { type: input.type, purpose: pending.purpose, reason, attempts, ...details },
      });
      await settled?.afterAudit?.();
    });
    if (attempts === null) throw invalidToken();
    // A replayed TOTP code is refused like a wrong one, but the user is told why: codes are single use.
    const why = reason === 'replay' ? 'This code has already been used; wait for the next one' : 'The code is invalid';
    throw new DomainError('INVALID_MFA_CODE', attempts >= MFA_TOKEN_MAX_ATTEMPTS ? `${why}; too many wrong codes, sign in again` : why);
  }

  /** The mfaToken is tied to the device of the pending login; a stranger's use kills it. */
  private async assertSameDevice(
    realm: Realm,
    token: OneTimeToken,
    pending: PendingLogin,
    observation: DeviceObservation,
    user: User,
    client: ClientContext,
    now: Date,
  ): Promise<void> {
    if (!pending.client) return;
    const issuedTo = this.devices.observe(pending.client);
    const score = similarity(issuedTo.fingerprint, observation.fingerprint);
    if (realm.policy.fingerprintMatches(score)) return;
    await this.tx.run(async () => {
      await this.oneTimeTokens.consume(token.tokenHash, now);
      await this.audit.record({
        type: 'mfa.failed',
        realmId: user.realmId,
        userId: user.id,
        sessionId: pending.sessionId ?? null,
        ip: client.ip,
        at: now,
        details: { purpose: pending.purpose, reason: 'device_mismatch', score },
      });
    });
    throw invalidToken('The MFA token was issued to another device');
  }

  /** The answer checked by the factor of its type. */
  private async checkFactor(attempt: {
    realm: Realm;
    user: User;
    type: MfaFactorType;
    code: string;
    token: OneTimeToken;
    pending: PendingLogin;
    now: Date;
  }): Promise<FactorCheck> {
    if (typeof attempt.code !== 'string' || attempt.code.length === 0) return refused('empty');
    const factor = this.factors.of(attempt.type);
    return factor ? factor.check(attempt) : refused('unknown_type');
  }

  /** the flagged session is restored, the verifying device becomes its reference, earlier refresh tokens die. */
  private async reverify(
    realm: Realm,
    user: User,
    pending: PendingLogin,
    client: ClientContext,
    observation: DeviceObservation,
    secondFactor: string,
    now: Date,
  ) {
    const session = pending.sessionId ? await this.sessions.findById(realm.id, pending.sessionId) : null;
    if (!session || session.userId !== user.id || !session.isLive(now, realm.policy.sessionLifetime)) {
      throw invalidToken('The session to re-verify has ended');
    }
    // The session keeps the first factor it was opened with; this second factor replaces any earlier one.
    session.clearFlag(observation.fingerprint, client.fingerprint, [...firstFactorAmr(session.amr), secondFactor]);
    session.touch(now, client.ip);
    // Revoked since it was read (a logout, an administrator): it stays ended.
    if (!(await this.sessions.save(session))) throw invalidToken('The session to re-verify has ended');
    await this.refreshTokens.deleteAllForSession(session.id);
    const tokens = await this.issuer.reissue(realm, user, session, now);
    return { sessionId: session.id, tokens };
  }
}
