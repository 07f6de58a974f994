import type { RelyingPartySettings } from '../../domain/realm/realm-settings';
import { WebauthnCredential } from './mfa-credential.repository';

export interface CredentialDescriptor {
  id: string;
  transports: string[];
}

/** What a verified registration yields, to be stored. */
export interface NewWebauthnCredential {
  id: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  deviceType: string | null;
  backedUp: boolean;
}

/** Options JSON for `navigator.credentials.*` (as @simplewebauthn/browser takes them) and their challenge. */
export interface CeremonyOptions {
  challenge: string;
  options: Record<string, unknown>;
}

export type AssertionCheck = { verified: true; counter: number; userVerified: boolean } | { verified: false; reason: string };

/**
 * The WebAuthn relying party (W3C WebAuthn §7): options for both ceremonies and verification of
 * the authenticator's answers against the realm's relying party `rp` (rpID, name, allowed origins:
 * `RealmPolicy.relyingParty`). User verification is required in both ceremonies.
 */
export abstract class WebAuthnRelyingParty {
  abstract registrationOptions(input: {
    userId: string;
    userName: string;
    displayName: string;
    exclude: CredentialDescriptor[];
    rp: RelyingPartySettings;
    /** A passkey: the authenticator must keep a discoverable (resident) credential. */
    passkey: boolean;
  }): Promise<CeremonyOptions>;
  /**
   * Verifies an attestation (RegistrationResponseJSON) for `expectedChallenge`.
   * @throws DomainError VALIDATION_FAILED (field `response`) when it does not verify
   */
  abstract verifyRegistration(response: unknown, expectedChallenge: string, rp: RelyingPartySettings): Promise<NewWebauthnCredential>;
  /** Request options; an empty `allow` asks for a discoverable credential (a passkey sign-in: the authenticator names the user). */
  abstract authenticationOptions(allow: CredentialDescriptor[], rp: RelyingPartySettings): Promise<CeremonyOptions>;
  /**
   * Verifies an assertion (AuthenticationResponseJSON) for `expectedChallenge` with the stored
   * credential's public key: type, challenge, origin, rpID hash, user presence and verification,
   * signature. The signature counter is returned, not judged (see `signCountAcceptable`).
   */
  abstract verifyAuthentication(
    response: unknown,
    expectedChallenge: string,
    credential: WebauthnCredential,
    rp: RelyingPartySettings,
  ): Promise<AssertionCheck>;
  /** The challenge a response answers (from its clientDataJSON), or null when unreadable. */
  abstract challengeOf(response: unknown): string | null;
  /** The credential id a response names, or null. */
  abstract credentialIdOf(response: unknown): string | null;
  /**
   * The user handle an assertion carries (a discoverable credential returns the `user.id` it was
   * registered with), decoded to the user id it was made from; null when absent or unreadable.
   */
  abstract userHandleOf(response: unknown): string | null;
}
