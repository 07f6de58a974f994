import { Injectable } from '@nestjs/common';
import type { AuthenticationResponseJSON, AuthenticatorTransport, RegistrationResponseJSON } from '@simplewebauthn/server';
import { WebauthnCredential } from '../../application/ports/mfa-credential.repository';
import {
  AssertionCheck,
  CeremonyOptions,
  CredentialDescriptor,
  NewWebauthnCredential,
  WebAuthnRelyingParty,
} from '../../application/ports/webauthn-relying-party';
import { DomainError } from '../../domain/errors';
import type { RelyingPartySettings } from '../../domain/realm/realm-settings';

/** The ceremony timeout announced to the browser; the server-side challenge lives as long. */
export const WEBAUTHN_TIMEOUT_MS = 300_000;
/** WebAuthn §5.1: credential ids are at most 1023 bytes. */
const MAX_CREDENTIAL_ID_BYTES = 1023;

const load = () => import('@simplewebauthn/server');
type WebAuthnLibrary = Awaited<ReturnType<typeof load>>;
let library: Promise<WebAuthnLibrary> | null = null;

/**
 * @simplewebauthn/server and its ASN.1/X.509 dependencies hold ~4 MB of heap; they are loaded on
 * the first WebAuthn ceremony, so instances (and hours) without one do not carry them.
 */
function webauthn(): Promise<WebAuthnLibrary> {
  library ??= load();
  return library;
}

/** base64url as WebAuthn's clientDataJSON uses it (padding tolerated), without loading the library. */
const BASE64URL = /^[A-Za-z0-9_-]*$/;

function descriptors(list: CredentialDescriptor[]) {
  return list.map((c) => ({ id: c.id, transports: c.transports as AuthenticatorTransport[] }));
}

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

const invalidResponse = (why: string) =>
  new DomainError('VALIDATION_FAILED', `response ${why}`, { details: [{ field: 'response', message: why }] });

/**
 * The relying party on @simplewebauthn/server: the realm's rpID, name and origins (by default
 * `WEBAUTHN_RP_ID`, `WEBAUTHN_RP_NAME`, `WEBAUTHN_ORIGINS`), user verification required,
 * attestation `none` (the service trusts keys, not vendors).
 */
@Injectable()
export class SimpleWebAuthnRelyingParty implements WebAuthnRelyingParty {
  async registrationOptions(input: {
    userId: string;
    userName: string;
    displayName: string;
    exclude: CredentialDescriptor[];
    rp: RelyingPartySettings;
    passkey: boolean;
  }): Promise<CeremonyOptions> {
    const { generateRegistrationOptions } = await webauthn();
    const options = await generateRegistrationOptions({
      rpName: input.rp.rpName,
      rpID: input.rp.rpId,
      userName: input.userName,
      userID: new TextEncoder().encode(input.userId),
      userDisplayName: input.displayName,
      timeout: WEBAUTHN_TIMEOUT_MS,
      attestationType: 'none',
      excludeCredentials: descriptors(input.exclude),
      authenticatorSelection: { residentKey: input.passkey ? 'required' : 'preferred', userVerification: 'required' },
    });
    return { challenge: options.challenge, options: options as unknown as Record<string, unknown> };
  }

  async verifyRegistration(response: unknown, expectedChallenge: string, rp: RelyingPartySettings): Promise<NewWebauthnCredential> {
    if (!asObject(response)) throw invalidResponse('must be a registration response object');
    const { verifyRegistrationResponse } = await webauthn();
    let result: Awaited<ReturnType<WebAuthnLibrary['verifyRegistrationResponse']>>;
    try {
      result = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.rpId,
        requireUserVerification: true,
      });
    } catch {
      // The library's messages name internals; the client learns only that it did not verify.
      throw invalidResponse('could not be verified');
    }
    if (!result.verified) throw invalidResponse('could not be verified');
    const { credential, credentialDeviceType, credentialBackedUp } = result.registrationInfo;
    if (Buffer.from(credential.id, 'base64url').length > MAX_CREDENTIAL_ID_BYTES)
      throw invalidResponse('has a credential id longer than 1023 bytes');
    return {
      id: credential.id,
      publicKey: credential.publicKey,
      counter: credential.counter,
      transports: (credential.transports ?? []).filter((t) => typeof t === 'string').slice(0, 10),
      deviceType: credentialDeviceType ?? null,
      backedUp: Boolean(credentialBackedUp),
    };
  }

  async authenticationOptions(allow: CredentialDescriptor[], rp: RelyingPartySettings): Promise<CeremonyOptions> {
    const { generateAuthenticationOptions } = await webauthn();
    const options = await generateAuthenticationOptions({
      rpID: rp.rpId,
      allowCredentials: descriptors(allow),
      userVerification: 'required',
      timeout: WEBAUTHN_TIMEOUT_MS,
    });
    return { challenge: options.challenge, options: options as unknown as Record<string, unknown> };
  }

  async verifyAuthentication(
    response: unknown,
    expectedChallenge: string,
    credential: WebauthnCredential,
    rp: RelyingPartySettings,
  ): Promise<AssertionCheck> {
    if (!asObject(response)) return { verified: false, reason: 'not_an_object' };
    const { verifyAuthenticationResponse } = await webauthn();
    try {
      const result = await verifyAuthenticationResponse({
        response: response as AuthenticationResponseJSON,
        expectedChallenge,
        expectedOrigin: rp.origins,
        expectedRPID: rp.rpId,
        requireUserVerification: true,
        // Counter 0 switches off the library's counter check: the caller applies the rule itself,
        // after the signature is known to be good, so a regression is told apart and audited.
        credential: {
          id: credential.id,
          publicKey: new Uint8Array(credential.publicKey),
          counter: 0,
          transports: credential.transports as AuthenticatorTransport[],
        },
      });
      if (!result.verified) return { verified: false, reason: 'signature' };
      return { verified: true, counter: result.authenticationInfo.newCounter, userVerified: result.authenticationInfo.userVerified };
    } catch (error) {
      return { verified: false, reason: reasonOf(error) };
    }
  }

  challengeOf(response: unknown): string | null {
    const clientDataJSON = asObject(asObject(response)?.response)?.clientDataJSON;
    if (typeof clientDataJSON !== 'string' || clientDataJSON.length > 8192 || !BASE64URL.test(clientDataJSON.replace(/=/g, '')))
      return null;
    try {
      const parsed = asObject(JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')));
      return typeof parsed?.challenge === 'string' ? parsed.challenge : null;
    } catch {
      return null;
    }
  }

  credentialIdOf(response: unknown): string | null {
    const id = asObject(response)?.id;
    return typeof id === 'string' && id.length > 0 && id.length <= 1400 ? id : null;
  }

  userHandleOf(response: unknown): string | null {
    const handle = asObject(asObject(response)?.response)?.userHandle;
    if (typeof handle !== 'string' || handle.length === 0 || handle.length > 128 || !BASE64URL.test(handle.replace(/=/g, ''))) return null;
    return Buffer.from(handle, 'base64url').toString('utf8');
  }
}

/** A short, fixed reason for the audit trail (never the library's free text). */
function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (/origin/i.test(message)) return 'origin';
  if (/challenge/i.test(message)) return 'challenge';
  if (/RP ID|rpID/i.test(message)) return 'rp_id';
  if (/user verification|user presen/i.test(message)) return 'user_verification';
  if (/type/i.test(message)) return 'type';
  return 'invalid';
}
