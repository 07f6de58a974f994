import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { normaliseRecoveryCode } from '../../domain/mfa/recovery-code';
import { signCountAcceptable } from '../../domain/mfa/webauthn';
import { Realm } from '../../domain/realm/realm';
import { similarity } from '../../domain/session/device-fingerprint';
import { User } from '../../domain/user/user';
import { ClientContext } from '../auth/client-context';
import { DeviceObservation, DeviceObserver } from '../auth/device-observation';
import { DpopRequest } from '../auth/dpop-binding';
import { MFA_TOKEN_MAX_ATTEMPTS, MfaChallenges, PendingLogin } from '../auth/mfa-challenges';
import { SignInContinuation } from '../auth/sign-in-continuation';
import { SessionIssuer, TokenSet } from '../auth/session-issuer';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { MfaCredentialRepository, WebauthnCredential } from '../ports/mfa-credential.repository';
import { OneTimeToken, OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { RefreshTokenRepository } from '../ports/refresh-token.repository';
import { SecretCipher } from '../ports/secret-cipher';
import { SessionRepository } from '../ports/session.repository';
import { TotpVerifier } from '../ports/totp-verifier';
import { Transaction } from '../ports/transaction';
import { SignInRefusedError, UserRepository } from '../ports/user.repository';
import { WebAuthnRelyingParty } from '../ports/webauthn-relying-party';
import { MfaAccount } from './mfa-account';
import { openMfaChallenge } from './open-mfa-challenge';

export type MfaFactorType = 'totp' | 'webauthn' | 'recovery';

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

/** A second factor checked: accepted pending its atomic write, or refused with a reason for the audit trail. */
type FactorCheck =
  | { ok: true; amr: 'otp' | 'hwk'; commit: () => Promise<boolean>; lostRace: string; details: Record<string, unknown> }
  | { ok: false; reason: string; details?: Record<string, unknown>; regressed?: WebauthnCredential };

const refused = (reason: string, details?: Record<string, unknown>): FactorCheck => ({ ok: false, reason, details });
const invalidToken = (message = 'The MFA token is invalid') => new DomainError('INVALID_TOKEN', message);

@Injectable()
export class VerifyMfaUseCase {
  constructor(
    private readonly challenges: MfaChallenges,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly users: UserRepository,
    private readonly credentials: MfaCredentialRepository,
    private readonly totp: TotpVerifier,
    private readonly cipher: SecretCipher,
    private readonly relyingParty: WebAuthnRelyingParty,
    private readonly account: MfaAccount,
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

    const check = await this.checkFactor(realm, user, input.type, input.code, token, pending, now);
    if (check.ok) {
      const result = await this.tx.run(async () => {
        if (!(await check.commit())) return null;
        if (!(await this.oneTimeTokens.consume(token.tokenHash, now))) throw invalidToken();
        const mfaDetails = { type: input.type, purpose: pending.purpose, ...check.details };
        if (pending.purpose !== 'reverify') {
          const amr = [...(pending.amr ?? ['pwd']), check.amr];
          return this.openSession(realm, user, client, observation, pending, amr, mfaDetails, dpopJkt, now);
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
      const regressed = !check.ok && check.regressed ? check.regressed : null;
      // A good signature with a counter that went back: a copy of the key may exist. The credential
      // is disabled in one conditional statement, so no concurrent assertion is accepted after it;
      // the request that disabled it records the regression and tells the owner, once.
      const disabled = regressed ? await this.credentials.disableWebauthn(regressed.id, 'counter_regression', now) : false;
      if (regressed && disabled) details = { ...details, credentialDisabled: true };
      if (regressed && !disabled) {
        reason = 'credential_disabled';
        details = { credentialId: regressed.id };
      }
      await this.audit.record({
        type: 'mfa.failed',
        realmId: realm.id,
        userId: user.id,
        sessionId: pending.sessionId ?? null,
        ip: client.ip,
        at: now,
        details: { type: input.type, purpose: pending.purpose, reason, attempts, ...details },
      });
      if (regressed && disabled) await this.account.notifyCredentialDisabled(realm, user, regressed);
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

  private async checkFactor(
    realm: Realm,
    user: User,
    type: MfaFactorType,
    code: string,
    token: OneTimeToken,
    pending: PendingLogin,
    now: Date,
  ): Promise<FactorCheck> {
    if (typeof code !== 'string' || code.length === 0) return refused('empty');
    switch (type) {
      case 'totp':
        return this.checkTotp(user, code, now);
      case 'recovery':
        return this.checkRecoveryCode(user, code, now);
      case 'webauthn':
        return this.checkWebauthn(realm, user, code, token, pending, now);
      default:
        return refused('unknown_type');
    }
  }

  private async checkTotp(user: User, code: string, now: Date): Promise<FactorCheck> {
    const credential = await this.credentials.findTotp(user.id);
    if (!credential?.confirmedAt) return refused('totp_not_enabled');
    const secret = await this.cipher.decrypt(credential.secretEncrypted, user.id);
    const step = this.totp.matchingStep(secret, code.trim(), now);
    if (step === null) return refused('wrong_code');
    if (step <= credential.lastUsedStep) return refused('replay');
    return { ok: true, amr: 'otp', commit: () => this.credentials.advanceTotpStep(user.id, step), lostRace: 'replay', details: {} };
  }

  private async checkRecoveryCode(user: User, code: string, now: Date): Promise<FactorCheck> {
    const normalised = normaliseRecoveryCode(code);
    if (!normalised) return refused('wrong_code');
    const hash = this.account.recoveryCodeHash(user.id, normalised);
    return {
      ok: true,
      amr: 'otp',
      commit: () => this.credentials.consumeRecoveryCode(user.id, hash, now),
      lostRace: 'wrong_code',
      details: {},
    };
  }

  private async checkWebauthn(
    realm: Realm,
    user: User,
    code: string,
    token: OneTimeToken,
    pending: PendingLogin,
    now: Date,
  ): Promise<FactorCheck> {
    const challenge = pending.webauthnChallenge;
    if (!challenge) return refused('no_challenge');
    // Any answer uses the challenge up: a second try needs new options.
    const { webauthnChallenge: _used, ...rest } = pending;
    await this.oneTimeTokens.updatePayload(token.tokenHash, rest as unknown as Record<string, unknown>);
    if (code.length > 16384) return refused('malformed');
    let response: unknown;
    try {
      response = JSON.parse(code);
    } catch {
      return refused('malformed');
    }
    const credentialId = this.relyingParty.credentialIdOf(response);
    const credential = credentialId ? await this.credentials.findWebauthn(credentialId) : null;
    if (!credential || credential.userId !== user.id) return refused('unknown_credential');
    if (credential.disabledAt) return refused('credential_disabled', { credentialId: credential.id });
    const check = await this.relyingParty.verifyAuthentication(response, challenge, credential, realm.policy.relyingParty);
    if (!check.verified) return refused(check.reason, { credentialId: credential.id });
    if (!signCountAcceptable(credential.counter, check.counter)) {
      // A valid signature with a counter that went back: probably a cloned authenticator.
      return {
        ok: false,
        reason: 'counter_regression',
        details: { credentialId: credential.id, storedCounter: credential.counter, receivedCounter: check.counter },
        regressed: credential,
      };
    }
    return {
      ok: true,
      amr: 'hwk',
      commit: () => this.credentials.recordWebauthnUse(credential.id, credential.counter, check.counter, now),
      lostRace: 'concurrent_use',
      details: { credentialId: credential.id },
    };
  }

  private async openSession(
    realm: Realm,
    user: User,
    client: ClientContext,
    observation: DeviceObservation,
    pending: PendingLogin,
    amr: string[],
    mfaDetails: Record<string, unknown>,
    dpopJkt: string | null,
    now: Date,
  ) {
    // Locked or suspended while the factor was checked: refused, and the transaction stores nothing.
    const { session, tokens } = await this.continuation
      .openSession(
        { realm, user, client, observation, method: pending.method ?? 'password', details: pending.details, dpopJkt },
        amr,
        now,
        mfaDetails,
      )
      .catch((error: unknown) => {
        throw error instanceof SignInRefusedError ? invalidToken() : error;
      });
    return { sessionId: session.id, tokens };
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
