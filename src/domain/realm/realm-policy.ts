import { DomainError } from '../errors';
import { matches } from '../session/device-fingerprint';
import type { SessionLifetime } from '../session/session';
import { assertAcceptablePassword, PasswordContext } from '../user/password-policy';
import { ClientRegistrationMode, copySettings, LockoutSettings, RealmSettings, RelyingPartySettings } from './realm-settings';

/**
 * The rules a realm applies to sign-ins, sessions, passwords and the links it sends, read from
 * its settings in force. Use cases ask the realm's policy rather than the configuration, so a
 * realm administrator's change reaches every flow.
 */
export class RealmPolicy {
  private constructor(private readonly s: RealmSettings) {}

  static of(settings: RealmSettings): RealmPolicy {
    return new RealmPolicy(settings);
  }

  /** Every setting with the value in force (copied: changing it changes nothing). */
  get settings(): RealmSettings {
    return copySettings(this.s);
  }

  /**
   * Self-registration is allowed only while the realm's registration is open; administrators
   * create users whatever it is.
   * @throws DomainError REGISTRATION_DISABLED
   */
  assertRegistrationOpen(): void {
    if (!this.registrationOpen) {
      throw new DomainError('REGISTRATION_DISABLED', 'Registration is closed in this realm: ask an administrator for an account');
    }
  }

  /** Anyone may make an account (registration, a first email code or identity-provider sign-in). */
  get registrationOpen(): boolean {
    return this.s.registration === 'open';
  }

  /** Who may register clients at the realm's OpenID provider without an administrator (RFC 7591). */
  get clientRegistration(): ClientRegistrationMode {
    return this.s.clientRegistration;
  }

  /** Signing in needs a verified email address. */
  get requiresVerifiedEmail(): boolean {
    return this.s.requireVerifiedEmail;
  }

  /**
   * Whether a user whose password was just verified may receive tokens: with
   * `requireVerifiedEmail`, only once the address is verified. Call it after the password check,
   * so the answer tells nothing to someone without the password.
   * @throws DomainError EMAIL_NOT_VERIFIED
   */
  assertMaySignIn(user: { emailVerified: boolean }): void {
    if (this.s.requireVerifiedEmail && !user.emailVerified) {
      throw new DomainError('EMAIL_NOT_VERIFIED', 'Verify your email address before signing in: use the link in the email we sent');
    }
  }

  get accessTokenTtlSeconds(): number {
    return this.s.accessTokenTtlSeconds;
  }

  /** The refresh limits of every session of the realm, those open already included. */
  get sessionLifetime(): SessionLifetime {
    return { idleTimeoutSeconds: this.s.sessionIdleTimeoutSeconds, maxLifetimeSeconds: this.s.sessionMaxLifetimeSeconds };
  }

  get lockout(): LockoutSettings {
    return { ...this.s.lockout };
  }

  /**
   * The password rules with this realm's minimum length (wherever a password is set).
   * @throws DomainError VALIDATION_FAILED with the reason on `field`
   */
  assertAcceptablePassword(
    password: string,
    isCommon: (candidate: string) => boolean,
    context: PasswordContext = {},
    field = 'password',
  ): void {
    assertAcceptablePassword(password, isCommon, { ...context, minLength: this.s.passwordMinLength }, field);
  }

  get fingerprintMatchThreshold(): number {
    return this.s.fingerprintMatchThreshold;
  }

  /** Whether a fingerprint similarity is close enough to the session's reference. */
  fingerprintMatches(score: number): boolean {
    return matches(score, this.s.fingerprintMatchThreshold);
  }

  /** Base of the links in the realm's emails (its frontend), without a trailing slash. */
  get publicUrl(): string {
    return this.s.publicUrl;
  }

  get relyingParty(): RelyingPartySettings {
    return { ...this.s.webauthn, origins: [...this.s.webauthn.origins] };
  }
}
