import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { Realm } from '../../domain/realm/realm';
import { User } from '../../domain/user/user';
import { EmailTemplates } from '../mail/email-templates';
import { Mailer, OutgoingEmail } from '../ports/mailer';
import { OneTimeTokenKind, OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SecureTokens } from '../ports/secure-tokens';

export const EMAIL_VERIFICATION_TTL_SECONDS = 24 * 3600;
export const PASSWORD_RESET_TTL_SECONDS = 3600;

/**
 * The account emails that carry a single-use link token (links into the realm's own frontend,
 * its `publicUrl`) and the notices that follow account changes. Each method writes to the outbox through `Mailer`, so call it inside
 * the transaction of the change that causes the email: both commit or neither does.
 */
@Injectable()
export class AccountEmails {
  constructor(
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly mailer: Mailer,
    private readonly config: AppConfig,
  ) {}

  /** A new 24-hour verification link; older unused verification tokens of the user stop working. */
  async sendVerification(realm: Realm, user: User, now: Date): Promise<void> {
    const token = await this.issue(user, 'email_verification', EMAIL_VERIFICATION_TTL_SECONDS, now);
    await this.mailer.enqueue(EmailTemplates.verification({ ...this.addressing(realm, user), publicUrl: realm.policy.publicUrl, token }));
  }

  /** A new 1-hour password-reset link; older unused reset tokens of the user stop working. */
  async sendPasswordReset(realm: Realm, user: User, now: Date): Promise<void> {
    const token = await this.issue(user, 'password_reset', PASSWORD_RESET_TTL_SECONDS, now);
    await this.mailer.enqueue(EmailTemplates.passwordReset({ ...this.addressing(realm, user), publicUrl: realm.policy.publicUrl, token }));
  }

  /**
   * For a user created by an administrator without a password: a 1-hour link to choose one.
   * It is a password-reset token, redeemed at POST /password/reset.
   */
  async sendInvitation(realm: Realm, user: User, now: Date): Promise<void> {
    const token = await this.issue(user, 'password_reset', PASSWORD_RESET_TTL_SECONDS, now);
    await this.mailer.enqueue(EmailTemplates.invitation({ ...this.addressing(realm, user), publicUrl: realm.policy.publicUrl, token }));
  }

  /** An invitation to an organization: a link with the invitation's single-use token, to the invited address. */
  async sendOrganizationInvitation(realm: Realm, to: string, token: string, organizationName: string): Promise<void> {
    await this.mailer.enqueue(
      EmailTemplates.organizationInvitation({
        realmId: realm.id,
        realmName: realm.name,
        to,
        publicUrl: realm.policy.publicUrl,
        token,
        organizationName,
      }),
    );
  }

  /** Tells the owner that the password was changed or reset (no link, nothing to redeem). */
  async sendPasswordChanged(realm: Realm, user: User): Promise<void> {
    await this.mailer.enqueue(EmailTemplates.passwordChanged(this.addressing(realm, user)));
  }

  /** A sign-in code (and its link, when the browser that asked gave a page to come back to) to an address, account or not. */
  async sendSignInCode(realm: Realm, to: string, code: string, minutes: number, link: string | null): Promise<void> {
    await this.mailer.enqueue(EmailTemplates.signInCode({ realmId: realm.id, realmName: realm.name, to, code, minutes, link }));
  }

  /**
   * Tells the owner that one of their WebAuthn credentials was disabled because its signature
   * counter went back (a copy of the key may exist), and what to do about it.
   */
  async sendCredentialDisabled(realm: Realm, user: User, credential: { name: string; passkey: boolean }): Promise<void> {
    const kind = credential.passkey ? 'passkey' : 'security key';
    await this.sendSecurityNotice(
      realm,
      user,
      `A sign-in with your ${kind} ("${credential.name}") was refused because its signature counter went backwards, ` +
        `which is what a copied (cloned) key looks like. The ${kind} is now disabled: it no longer signs you in. ` +
        `Remove it from your account and register it again; if you did not just sign in, also change your password.`,
    );
  }

  /**
   * Any other security notice to the account's owner, with a link to the account console's
   * security page where the service serves the console.
   */
  async sendSecurityNotice(realm: Realm, user: User, what: string): Promise<void> {
    const message: OutgoingEmail = EmailTemplates.securityNotice({
      ...this.addressing(realm, user),
      what,
      manageUrl: this.securityPage(realm),
    });
    await this.mailer.enqueue(message);
  }

  /** The account console's security page of the realm; null where the console is not served. */
  private securityPage(realm: Realm): string | null {
    if (!this.config.accountConsole) return null;
    const query = realm.id === 'default' ? '' : `?realm=${encodeURIComponent(realm.id)}`;
    return `${this.config.apiUrl}/account/${query}#security`;
  }

  private addressing(realm: Realm, user: User) {
    return { realmId: user.realmId, realmName: realm.name, to: user.email };
  }

  /** Voids the older tokens of the kind, stores the new one as a hash bound to realm, user and address. */
  private async issue(user: User, kind: OneTimeTokenKind, ttlSeconds: number, now: Date): Promise<string> {
    const token = this.secureTokens.generate();
    await this.oneTimeTokens.voidUnused(user.id, kind, now);
    await this.oneTimeTokens.insert({
      tokenHash: this.secureTokens.hash(token),
      realmId: user.realmId,
      userId: user.id,
      kind,
      email: user.email,
      payload: {},
      attempts: 0,
      createdAt: now,
      expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
      usedAt: null,
    });
    return token;
  }
}
