import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { restoreFingerprint, similarity } from '../../domain/session/device-fingerprint';
import { Session } from '../../domain/session/session';
import { User } from '../../domain/user/user';
import { AuditLog } from '../ports/audit-log';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { AccountEmails } from '../account/account-emails';
import { ClientContext } from './client-context';
import { DeviceObserver } from './device-observation';
import { MfaChallenges } from './mfa-challenges';
import { SessionGuardian } from './session-guardian';

interface GuardInput {
  realm: Realm;
  user: User;
  session: Session;
  client: ClientContext;
  now: Date;
}

/**
 * Hijack detection: each refresh is compared with the session's reference
 * device; a session used from a device that does not match is flagged, its owner notified, and
 * the refresh refused until the owner proves themselves again — with MFA when they have it
 * (the same session continues), otherwise by signing in again (the session is revoked).
 */
@Injectable()
export class FingerprintSessionGuardian extends SessionGuardian {
  constructor(
    private readonly devices: DeviceObserver,
    private readonly sessions: SessionRepository,
    private readonly mfaChallenges: MfaChallenges,
    private readonly emails: AccountEmails,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
  ) {
    super();
  }

  /**
   * Lets a matching use through. A non-match, or any use of an already flagged session, is
   * refused. The flag, the audit events, the email and the mfaToken commit before the error is
   * thrown: the refresh fails, the evidence stays.
   * @throws DomainError MFA_REQUIRED (with `mfaToken`) | REAUTHENTICATION_REQUIRED | VALIDATION_FAILED | INVALID_TOKEN (revoked meanwhile)
   */
  override async check(input: GuardInput): Promise<void> {
    const { session, now, realm } = input;
    const observation = this.devices.observe(input.client);
    if (session.status === 'flagged') return this.refuse(input);

    const score = similarity(restoreFingerprint(session.referenceFingerprint), observation.fingerprint);
    if (realm.policy.fingerprintMatches(score)) return;

    const { user, client } = input;
    const deviceName = observation.detected.name;
    const error = await this.tx.run(async () => {
      session.flagMismatch(score, now);
      // Revoked since the refresh read it (a logout, an administrator): ended, nothing to flag.
      if (!(await this.sessions.save(session))) return new DomainError('INVALID_TOKEN', 'The refresh token is invalid');
      await this.audit.record({
        type: 'session.flagged',
        realmId: realm.id,
        userId: user.id,
        sessionId: session.id,
        ip: client.ip,
        at: now,
        details: { reason: 'fingerprint_mismatch', score, threshold: realm.policy.fingerprintMatchThreshold, device: deviceName },
      });
      await this.emails.sendSecurityNotice(
        realm,
        user,
        `Your session was just used from a device that does not match the one it was opened on (${deviceName}, IP address ${client.ip}). ` +
          (user.mfaEnabled
            ? 'It is paused until it is confirmed with your second factor.'
            : 'It has been ended; sign in again to continue.'),
      );
      return this.answer(input);
    });
    throw error;
  }

  /** A flagged session stays refused until re-verified; nothing new is flagged or mailed. */
  private async refuse(input: GuardInput): Promise<never> {
    throw await this.tx.run(() => this.answer(input));
  }

  /** MFA users get a re-verification challenge for this session; others lose the session. */
  private async answer({ realm, user, session, client, now }: GuardInput): Promise<DomainError> {
    if (user.mfaEnabled) {
      const mfaToken = await this.mfaChallenges.create({ realm, user, client, purpose: 'reverify', sessionId: session.id, now });
      return new DomainError('MFA_REQUIRED', 'This session must be confirmed with a second factor', { mfaToken });
    }
    if (await this.sessions.revoke(realm.id, session.id, now, 'fingerprint_mismatch')) {
      await this.audit.record({
        type: 'session.revoked',
        realmId: realm.id,
        userId: user.id,
        sessionId: session.id,
        ip: client.ip,
        at: now,
        details: { reason: 'fingerprint_mismatch' },
      });
    }
    return new DomainError('REAUTHENTICATION_REQUIRED', 'This session has ended; sign in again');
  }
}
