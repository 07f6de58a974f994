import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
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
import { originMatcher } from '../../config/origins';

/** The ceremony timeout announced to the browser; the server-side challenge lives as long. */
export const WEBAUTHN_TIMEOUT_MS = 300_000;
/** WebAuthn §5.1: credential ids are at most 1023 bytes. */
const MAX_CREDENTIAL_ID_BYTES = 1023;

const load = () => import('@simplewebauthn/server');
type WebAuthnLibrary = Awaited<ReturnType<typeof load>>;
let library: Promise<WebAuthnLibrary> | null = null;
const loadHelpers = () => import('@simplewebauthn/server/helpers');

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

/** The parsed clientDataJSON of a response, or null when unreadable. */
function clientDataOf(response: unknown): Record<string, unknown> | null {
  const clientDataJSON = asObject(asObject(response)?.response)?.clientDataJSON;
  if (typeof clientDataJSON !== 'string' || clientDataJSON.length > 8192 || !BASE64URL.test(clientDataJSON.replace(/=/g, ''))) return null;
  try {
    return asObject(JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')));
  } catch {
    return null;
  }
}

/**
 * The origins a response is checked against: the relying party's exact origins, or — when the
 * origin the browser reports matches an any-port entry (`http://localhost:*`, the development
 * profile's) — that origin itself.
 */
function expectedOrigins(rp: RelyingPartySettings, received: string | null): string[] {
  if (received !== null && rp.origins.some((o) => o.endsWith(':*')) && originMatcher(rp.origins)(received)) return [received];
  return rp.origins;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

const invalidResponse = (why: string) =>
  new DomainError('VALIDATION_FAILED', `response ${why}`, { details: [{ field: 'response', message: why }] });

/**
 * The relying party on @simplewebauthn/server: the realm's rpID, name and origins (by default
 * `WEBAUTHN_RP_ID`, `WEBAUTHN_RP_NAME`, `WEBAUTHN_ORIGINS`), user verification required,
 * attestation `none` (the service trusts keys, not vendors).
 */
@Injectable()
export class SimpleWebAuthnRelyingParty implements WebAuthnRelyingParty {
  private readonly logger = new Logger('WebAuthn');

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
    const receivedOrigin = originOf(response);
    let result: Awaited<ReturnType<WebAuthnLibrary['verifyRegistrationResponse']>>;
    try {
      result = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge,
        expectedOrigin: expectedOrigins(rp, receivedOrigin),
        expectedRPID: rp.rpId,
        requireUserVerification: true,
      });
    } catch (error) {
      // The library's messages name internals; the client learns only that it did not verify,
      // the log what was expected and what arrived.
      await this.logFailure('registration', reasonOf(error), response, rp);
      throw invalidResponse('could not be verified');
    }
    if (!result.verified) {
      await this.logFailure('registration', 'invalid', response, rp);
      throw invalidResponse('could not be verified');
    }
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
        expectedOrigin: expectedOrigins(rp, originOf(response)),
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
      if (!result.verified) {
        await this.logFailure('authentication', 'signature', response, rp);
        return { verified: false, reason: 'signature' };
      }
      return { verified: true, counter: result.authenticationInfo.newCounter, userVerified: result.authenticationInfo.userVerified };
    } catch (error) {
      const reason = reasonOf(error);
      await this.logFailure('authentication', reason, response, rp);
      return { verified: false, reason };
    }
  }

  /**
   * A warning naming the expected and the received origin and RP ID, so a developer sees at once
   * which origin to configure (`WEBAUTHN_ORIGINS`, `WEBAUTHN_RP_ID` or the realm's settings). The
   * authenticator sends only a hash of the RP ID: it is named when it is the hash of the expected
   * RP ID or of the received origin's host, and shown as a hash otherwise.
   */
  private async logFailure(ceremony: string, reason: string, response: unknown, rp: RelyingPartySettings): Promise<void> {
    const receivedOrigin = originOf(response);
    const hash = await rpIdHashOf(response, ceremony);
    let receivedRpId: string | null = null;
    if (hash) {
      const host = receivedOrigin ? hostOf(receivedOrigin) : null;
      if (hash.equals(sha256(rp.rpId))) receivedRpId = rp.rpId;
      else if (host && hash.equals(sha256(host))) receivedRpId = host;
      else receivedRpId = `unknown (SHA-256 ${hash.toString('hex')})`;
    }
    const fields = {
      ceremony,
      reason,
      expectedOrigins: rp.origins,
      receivedOrigin,
      expectedRpId: rp.rpId,
      receivedRpId,
    };
    this.logger.warn(
      fields,
      `WebAuthn ${ceremony} did not verify (${reason}): expected origin ${rp.origins.join(' or ')} and RP ID ${rp.rpId}, ` +
        `received origin ${receivedOrigin ?? 'none'} and RP ID ${receivedRpId ?? 'none'}`,
    );
  }

  challengeOf(response: unknown): string | null {
    const challenge = clientDataOf(response)?.challenge;
    return typeof challenge === 'string' ? challenge : null;
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

/** The origin the browser reports in a response's clientDataJSON (at most 200 characters), or null. */
function originOf(response: unknown): string | null {
  const origin = clientDataOf(response)?.origin;
  return typeof origin === 'string' && origin.length <= 200 ? origin : null;
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).hostname;
  } catch {
    return null;
  }
}

/** The RP ID hash of the authenticator data (its first 32 bytes), from an assertion or an attestation object; null when unreadable. */
async function rpIdHashOf(response: unknown, ceremony: string): Promise<Buffer | null> {
  const body = asObject(asObject(response)?.response);
  try {
    if (ceremony === 'authentication' && typeof body?.authenticatorData === 'string') {
      const data = Buffer.from(body.authenticatorData, 'base64url');
      return data.length >= 32 ? data.subarray(0, 32) : null;
    }
    if (typeof body?.attestationObject === 'string' && body.attestationObject.length < 65_536) {
      const { decodeAttestationObject } = await loadHelpers();
      const authData = decodeAttestationObject(Buffer.from(body.attestationObject, 'base64url')).get('authData');
      return authData && authData.length >= 32 ? Buffer.from(authData.subarray(0, 32)) : null;
    }
  } catch {
    return null;
  }
  return null;
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
