import { Injectable } from '@nestjs/common';
import { normaliseRecoveryCode } from '../../domain/mfa/recovery-code';
import { signCountAcceptable } from '../../domain/mfa/webauthn';
import { Realm } from '../../domain/realm/realm';
import { User } from '../../domain/user/user';
import { PendingLogin } from '../sign-in/mfa-challenges';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { OneTimeToken, OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SecretCipher } from '../ports/secret-cipher';
import { TotpVerifier } from '../ports/totp-verifier';
import { WebAuthnRelyingParty } from '../ports/webauthn-relying-party';
import { MfaAccount } from './mfa-account';

/** What a second factor is answered with (`POST /mfa/verify`'s `type`). */
export const MFA_FACTOR_TYPES = ['totp', 'webauthn', 'recovery'] as const;
export type MfaFactorType = (typeof MFA_FACTOR_TYPES)[number];

/** A second step being answered: the account, the code, and the challenge it answers. */
export interface SecondFactorAttempt {
  realm: Realm;
  user: User;
  /** The answer as sent (a TOTP code, a recovery code, a WebAuthn assertion as JSON). */
  code: string;
  token: OneTimeToken;
  pending: PendingLogin;
  now: Date;
}

/** What a refusal leads to once it is settled: the reason audited, and what follows the audit. */
export interface SettledRefusal {
  reason: string;
  details: Record<string, unknown>;
  /** Run after the refusal is audited, in the same transaction (an email to the owner). */
  afterAudit?: () => Promise<void>;
}

/** A second factor checked: accepted pending its atomic write, or refused with a reason for the audit trail. */
export type FactorCheck =
  | {
      ok: true;
      /** Appended to the session's `amr` (RFC 8176). */
      amr: 'otp' | 'hwk';
      /** The factor's own atomic write (a step, a code, a counter); false when a concurrent request won it. */
      commit: () => Promise<boolean>;
      /** The reason audited when `commit` loses. */
      lostRace: string;
      details: Record<string, unknown>;
    }
  | {
      ok: false;
      reason: string;
      details?: Record<string, unknown>;
      /** The factor's own write on a refusal, in the refusal's transaction; it may change what is audited. */
      settle?: () => Promise<SettledRefusal>;
    };

export const refused = (reason: string, details?: Record<string, unknown>): FactorCheck => ({ ok: false, reason, details });

/**
 * One kind of second factor. Adding one is a class like these and its entry in `SecondFactors`;
 * the second step (`VerifyMfaUseCase`) and the sign-in's continuation are the same for all.
 */
export abstract class SecondFactor {
  abstract readonly type: MfaFactorType;
  /** Checks the answer without writing anything but what the check itself must use up (a WebAuthn challenge). */
  abstract check(attempt: SecondFactorAttempt): Promise<FactorCheck>;
}

/** A code of the user's authenticator app (RFC 6238), each time step accepted once. */
@Injectable()
export class TotpFactor extends SecondFactor {
  readonly type = 'totp' as const;
  constructor(
    private readonly credentials: MfaCredentialRepository,
    private readonly cipher: SecretCipher,
    private readonly totp: TotpVerifier,
  ) {
    super();
  }

  async check({ user, code, now }: SecondFactorAttempt): Promise<FactorCheck> {
    const credential = await this.credentials.findTotp(user.id);
    if (!credential?.confirmedAt) return refused('totp_not_enabled');
    const secret = await this.cipher.decrypt(credential.secretEncrypted, user.id);
    const step = this.totp.matchingStep(secret, code.trim(), now);
    if (step === null) return refused('wrong_code');
    if (step <= credential.lastUsedStep) return refused('replay');
    return { ok: true, amr: 'otp', commit: () => this.credentials.advanceTotpStep(user.id, step), lostRace: 'replay', details: {} };
  }
}

/** One of the user's recovery codes, each accepted once. */
@Injectable()
export class RecoveryCodeFactor extends SecondFactor {
  readonly type = 'recovery' as const;
  constructor(
    private readonly credentials: MfaCredentialRepository,
    private readonly account: MfaAccount,
  ) {
    super();
  }

  async check({ user, code, now }: SecondFactorAttempt): Promise<FactorCheck> {
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
}

/**
 * An assertion of one of the user's security keys or passkeys against the challenge of this
 * step. Any answer uses the challenge up. A valid signature whose counter went back (a copy of
 * the key may exist) disables the credential, once, and its owner is told.
 */
@Injectable()
export class WebauthnFactor extends SecondFactor {
  readonly type = 'webauthn' as const;
  constructor(
    private readonly credentials: MfaCredentialRepository,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly relyingParty: WebAuthnRelyingParty,
    private readonly account: MfaAccount,
  ) {
    super();
  }

  async check({ realm, user, code, token, pending, now }: SecondFactorAttempt): Promise<FactorCheck> {
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
      const details = { credentialId: credential.id, storedCounter: credential.counter, receivedCounter: check.counter };
      return {
        ok: false,
        reason: 'counter_regression',
        details,
        // Disabled in one conditional statement, so no concurrent assertion is accepted after it;
        // the request that disabled it records the regression and tells the owner, once.
        settle: async () =>
          (await this.credentials.disableWebauthn(credential.id, 'counter_regression', now))
            ? {
                reason: 'counter_regression',
                details: { ...details, credentialDisabled: true },
                afterAudit: () => this.account.notifyCredentialDisabled(realm, user, credential),
              }
            : { reason: 'credential_disabled', details: { credentialId: credential.id } },
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
}

/** The second factors by type. */
@Injectable()
export class SecondFactors {
  private readonly byType: ReadonlyMap<string, SecondFactor>;

  constructor(totp: TotpFactor, recovery: RecoveryCodeFactor, webauthn: WebauthnFactor) {
    this.byType = new Map([totp, recovery, webauthn].map((factor) => [factor.type, factor]));
  }

  /** The factor of `type`, or null for a type nobody answers with. */
  of(type: string): SecondFactor | null {
    return this.byType.get(type) ?? null;
  }
}
