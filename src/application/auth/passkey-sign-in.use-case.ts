import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { signCountAcceptable } from '../../domain/mfa/webauthn';
import { Realm } from '../../domain/realm/realm';
import { User } from '../../domain/user/user';
import { AccountEmails } from '../account/account-emails';
import { ClientContext } from '../sign-in/client-context';
import { DpopRequest } from '../sign-in/dpop-binding';
import { SignInContinuation, SignInOutcome } from '../sign-in/sign-in-continuation';
import { Clock } from '../ports/clock';
import { OrganizationSignIn } from '../organizations/organization-sign-in';
import { MfaCredentialRepository } from '../ports/mfa-credential.repository';
import { OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { WebAuthnRelyingParty } from '../ports/webauthn-relying-party';

/** How long a passkey challenge may be answered: the ceremony timeout the options announce. */
export const PASSKEY_CHALLENGE_TTL_SECONDS = 300;

/** A passkey proves two factors at once: the device (`hwk`) and its PIN or biometric. */
const PASSKEY_AMR = ['hwk', 'mfa'];

export interface PasskeyOptions {
  challengeId: string;
  options: Record<string, unknown>;
}

const refusedAnswer = () => new DomainError('INVALID_CREDENTIALS', 'The passkey could not be verified');

/** Options for a passkey sign-in: a challenge no user is known for yet (the authenticator names one). */
@Injectable()
export class StartPasskeySignInUseCase {
  constructor(
    private readonly relyingParty: WebAuthnRelyingParty,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly clock: Clock,
  ) {}

  /**
   * PublicKeyCredentialRequestOptionsJSON with an empty `allowCredentials` and user verification
   * required, for the realm's relying party. The challenge is kept server-side under the hash of
   * `challengeId`: single use, valid 5 minutes.
   */
  async execute(input: { realm: Realm }): Promise<PasskeyOptions> {
    const now = this.clock.now();
    const { challenge, options } = await this.relyingParty.authenticationOptions([], input.realm.policy.relyingParty);
    const challengeId = this.secureTokens.generate();
    await this.oneTimeTokens.insert({
      tokenHash: this.secureTokens.hash(challengeId),
      realmId: input.realm.id,
      userId: null,
      kind: 'passkey_challenge',
      email: null,
      payload: { challenge },
      attempts: 0,
      createdAt: now,
      expiresAt: new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_SECONDS * 1000),
      usedAt: null,
    });
    return { challengeId, options };
  }
}

export interface PasskeySignInInput {
  realm: Realm;
  challengeId: string;
  response: unknown;
  client: ClientContext;
  dpop?: DpopRequest | null;
}

/** Sign-in with a passkey alone: the first factor and the second at once. */
@Injectable()
export class PasskeySignInUseCase {
  constructor(
    private readonly relyingParty: WebAuthnRelyingParty,
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly credentials: MfaCredentialRepository,
    private readonly users: UserRepository,
    private readonly continuation: SignInContinuation,
    private readonly emails: AccountEmails,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly organizations: OrganizationSignIn,
  ) {}

  /**
   * Verifies the assertion for the challenge (used up by any answer): a credential registered as
   * a passkey, of a user of this realm, signed for the realm's relying party and origins, user
   * verified, with a signature counter that went forward. Then signs in as a login does, without
   * a second step (`amr` `["hwk","mfa"]`). A counter that went back disables the credential (a
   * clone may exist): from then on it is refused like an unknown one until its owner removes it.
   * @throws DomainError INVALID_CREDENTIALS (every refusal of the answer alike) | ACCOUNT_LOCKED |
   *   ACCOUNT_SUSPENDED | EMAIL_NOT_VERIFIED | INVALID_DPOP_PROOF | VALIDATION_FAILED (fingerprint)
   */
  async execute(input: PasskeySignInInput): Promise<SignInOutcome> {
    const { realm, client } = input;
    // A malformed fingerprint or a bad DPoP proof is refused before the challenge is spent.
    const { now, observation, dpopJkt } = await this.continuation.begin(client, input.dpop);
    const refuse = async (reason: string, user: User | null = null, details: Record<string, unknown> = {}): Promise<never> => {
      await this.continuation.refused({ realm, client, method: 'passkey', user }, now, { reason, ...details });
      throw refusedAnswer();
    };

    const tokenHash = this.secureTokens.hash(input.challengeId);
    const challenge = await this.oneTimeTokens.find(tokenHash, 'passkey_challenge');
    // Any answer uses the challenge up, so a captured assertion can never be played again.
    if (!challenge || challenge.realmId !== realm.id || !(await this.oneTimeTokens.consume(tokenHash, now))) {
      return refuse('challenge');
    }
    const expected = typeof challenge.payload.challenge === 'string' ? challenge.payload.challenge : null;
    if (!expected) return refuse('challenge');

    const credentialId = this.relyingParty.credentialIdOf(input.response);
    const credential = credentialId ? await this.credentials.findWebauthn(credentialId) : null;
    const user = credential ? await this.users.findById(realm.id, credential.userId) : null;
    if (!credential || !user) return refuse('unknown_credential');
    if (!credential.passkey) return refuse('not_a_passkey', user, { credentialId: credential.id });
    if (credential.disabledAt) return refuse('credential_disabled', user, { credentialId: credential.id });
    // A discoverable credential names its user; it must be the credential's owner. An assertion
    // without a readable handle did not come from a discoverable credential (WebAuthn §7.2 step 6).
    const handle = this.relyingParty.userHandleOf(input.response);
    if (handle !== user.id) return refuse('user_handle', user, { credentialId: credential.id });

    const check = await this.relyingParty.verifyAuthentication(input.response, expected, credential, realm.policy.relyingParty);
    if (!check.verified) return refuse(check.reason, user, { credentialId: credential.id });
    if (!signCountAcceptable(credential.counter, check.counter)) {
      await this.tx.run(async () => {
        // Disabled in one conditional statement: a concurrent assertion cannot be accepted after it,
        // and only the request that disabled it audits the regression and tells the owner.
        const disabled = await this.credentials.disableWebauthn(credential.id, 'counter_regression', now);
        const details = disabled
          ? { reason: 'counter_regression', storedCounter: credential.counter, receivedCounter: check.counter, credentialDisabled: true }
          : { reason: 'credential_disabled' };
        await this.continuation.refused({ realm, client, method: 'passkey', user }, now, { ...details, credentialId: credential.id });
        if (disabled) await this.emails.sendCredentialDisabled(realm, user, credential);
      });
      throw refusedAnswer();
    }
    await this.organizations.assertOtherWaysAllowed({ realm, email: user.email, user, method: 'passkey', ip: client.ip });
    return this.continuation.continue(
      {
        realm,
        user,
        client,
        amr: PASSKEY_AMR,
        method: 'passkey',
        multiFactor: true,
        observation,
        dpopJkt,
        commit: () => this.credentials.recordWebauthnUse(credential.id, credential.counter, check.counter, now),
        details: { credentialId: credential.id },
      },
      'concurrent_use',
    );
  }
}
