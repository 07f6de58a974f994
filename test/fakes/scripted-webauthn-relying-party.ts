import { WebauthnCredential } from '../../src/application/ports/mfa-credential.repository';
import {
  AssertionCheck,
  CeremonyOptions,
  CredentialDescriptor,
  NewWebauthnCredential,
  WebAuthnRelyingParty,
} from '../../src/application/ports/webauthn-relying-party';
import { DomainError } from '../../src/domain/errors';
import type { RelyingPartySettings } from '../../src/domain/realm/realm-settings';

/**
 * What a scripted authenticator answers: plain fields instead of signed CBOR. `signedFor` is the
 * rpID it signed for (the realm's unless given), `counter` its signature counter, `forged` a
 * signature that does not verify.
 */
export interface ScriptedAssertion {
  credentialId: string;
  challenge: string;
  userHandle?: string | null;
  counter?: number;
  signedFor?: string;
  forged?: boolean;
}

export interface ScriptedAttestation {
  credentialId: string;
  challenge: string;
  publicKey?: number[];
  counter?: number;
}

let challenges = 0;

/**
 * A relying party over scripted answers: it checks what the real one checks (challenge, rpID,
 * signature, user verification) on fields a test writes, so use cases can be driven down every
 * branch without an authenticator.
 */
export class ScriptedWebAuthnRelyingParty extends WebAuthnRelyingParty {
  async registrationOptions(input: {
    userId: string;
    userName: string;
    displayName: string;
    exclude: CredentialDescriptor[];
    rp: RelyingPartySettings;
    passkey: boolean;
  }): Promise<CeremonyOptions> {
    const challenge = nextChallenge();
    return {
      challenge,
      options: {
        challenge,
        rp: { id: input.rp.rpId, name: input.rp.rpName },
        user: { id: input.userId, name: input.userName, displayName: input.displayName },
        excludeCredentials: input.exclude,
        authenticatorSelection: { residentKey: input.passkey ? 'required' : 'discouraged', userVerification: 'required' },
      },
    };
  }

  async verifyRegistration(response: unknown, expectedChallenge: string): Promise<NewWebauthnCredential> {
    const answer = response as Partial<ScriptedAttestation> | null;
    if (!answer?.credentialId || answer.challenge !== expectedChallenge) {
      throw new DomainError('VALIDATION_FAILED', 'response does not verify', {
        details: [{ field: 'response', message: 'does not verify' }],
      });
    }
    return {
      id: answer.credentialId,
      publicKey: new Uint8Array(answer.publicKey ?? [1, 2, 3]),
      counter: answer.counter ?? 0,
      transports: ['internal'],
      deviceType: 'multiDevice',
      backedUp: true,
    };
  }

  async authenticationOptions(allow: CredentialDescriptor[], rp: RelyingPartySettings): Promise<CeremonyOptions> {
    const challenge = nextChallenge();
    return { challenge, options: { challenge, rpId: rp.rpId, allowCredentials: allow, userVerification: 'required' } };
  }

  async verifyAuthentication(
    response: unknown,
    expectedChallenge: string,
    credential: WebauthnCredential,
    rp: RelyingPartySettings,
  ): Promise<AssertionCheck> {
    const answer = response as ScriptedAssertion;
    if (answer.challenge !== expectedChallenge) return { verified: false, reason: 'challenge' };
    if (answer.credentialId !== credential.id) return { verified: false, reason: 'credential' };
    if ((answer.signedFor ?? rp.rpId) !== rp.rpId) return { verified: false, reason: 'rp_id' };
    if (answer.forged) return { verified: false, reason: 'signature' };
    return { verified: true, counter: answer.counter ?? credential.counter + 1, userVerified: true };
  }

  challengeOf(response: unknown): string | null {
    const challenge = (response as Partial<ScriptedAssertion> | null)?.challenge;
    return typeof challenge === 'string' ? challenge : null;
  }

  credentialIdOf(response: unknown): string | null {
    const id = (response as Partial<ScriptedAssertion> | null)?.credentialId;
    return typeof id === 'string' ? id : null;
  }

  userHandleOf(response: unknown): string | null {
    const handle = (response as Partial<ScriptedAssertion> | null)?.userHandle;
    return typeof handle === 'string' ? handle : null;
  }
}

function nextChallenge(): string {
  challenges += 1;
  return `challenge-${challenges}-${Math.random().toString(36).slice(2, 10)}`;
}
