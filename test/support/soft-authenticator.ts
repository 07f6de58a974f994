import { createHash, generateKeyPairSync, KeyObject, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A software WebAuthn authenticator (P-256 / ES256, attestation "none") for API-level tests:
 * it builds the attestations and assertions a browser would pass on, and lets a test tamper
 * with what a real authenticator never would (origin, counter, flags, type).
 */
export class SoftAuthenticator {
  readonly credentialId: Buffer;
  private readonly privateKey: KeyObject;
  private readonly x: Buffer;
  private readonly y: Buffer;
  counter = 0;
  /**
   * A resident (discoverable) credential keeps the `user.id` of its creation options and returns
   * it as `userHandle` in every assertion, as passkeys do; a plain security key returns none.
   */
  resident = false;
  userHandle: string | null = null;

  constructor(
    readonly origin = 'http://localhost:3000',
    readonly rpId = 'localhost',
    source?: SoftAuthenticator,
  ) {
    if (source) {
      // A clone: same key, same credential id, its own counter.
      this.credentialId = source.credentialId;
      this.privateKey = source.privateKey;
      this.x = source.x;
      this.y = source.y;
      this.counter = source.counter;
      this.resident = source.resident;
      this.userHandle = source.userHandle;
      return;
    }
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    this.privateKey = privateKey;
    this.x = Buffer.from(jwk.x!, 'base64url');
    this.y = Buffer.from(jwk.y!, 'base64url');
    this.credentialId = randomBytes(32);
  }

  get id(): string {
    return this.credentialId.toString('base64url');
  }

  clone(): SoftAuthenticator {
    return new SoftAuthenticator(this.origin, this.rpId, this);
  }

  /** RegistrationResponseJSON for creation options (their `challenge`). */
  attestation(
    options: { challenge: string; user?: { id?: string } },
    tamper: { origin?: string; type?: string; userVerified?: boolean; rpId?: string } = {},
  ) {
    this.userHandle = options.user?.id ?? null;
    const clientDataJSON = this.clientData(tamper.type ?? 'webauthn.create', options.challenge, tamper.origin);
    const cosePublicKey = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, this.x],
        [-3, this.y],
      ]),
    );
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      this.rpIdHash(tamper.rpId),
      Buffer.from([0x41 | (tamper.userVerified === false ? 0 : 0x04)]), // UP | AT (| UV)
      this.counterBytes(this.counter),
      Buffer.alloc(16), // AAGUID
      idLength,
      this.credentialId,
      Buffer.from(cosePublicKey),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', new Uint8Array(authData)],
      ]) as never,
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['usb'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'cross-platform',
    };
  }

  /** AuthenticationResponseJSON for request options; each assertion bumps the counter unless told otherwise. */
  assertion(
    options: { challenge: string },
    tamper: {
      origin?: string;
      type?: string;
      userVerified?: boolean;
      userPresent?: boolean;
      rpId?: string;
      counter?: number;
      userHandle?: string;
    } = {},
  ) {
    if (tamper.counter === undefined) this.counter += 1;
    const counter = tamper.counter ?? this.counter;
    const clientDataJSON = this.clientData(tamper.type ?? 'webauthn.get', options.challenge, tamper.origin);
    const flags = (tamper.userPresent === false ? 0 : 0x01) | (tamper.userVerified === false ? 0 : 0x04);
    const authenticatorData = Buffer.concat([this.rpIdHash(tamper.rpId), Buffer.from([flags]), this.counterBytes(counter)]);
    const signed = Buffer.concat([authenticatorData, createHash('sha256').update(clientDataJSON).digest()]);
    const signature = sign('sha256', signed, this.privateKey);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authenticatorData.toString('base64url'),
        signature: signature.toString('base64url'),
        ...(tamper.userHandle !== undefined
          ? { userHandle: tamper.userHandle }
          : this.resident && this.userHandle
            ? { userHandle: this.userHandle }
            : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'cross-platform',
    };
  }

  private clientData(type: string, challenge: string, origin?: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: origin ?? this.origin, crossOrigin: false }));
  }

  private rpIdHash(rpId?: string): Buffer {
    return createHash('sha256')
      .update(rpId ?? this.rpId)
      .digest();
  }

  private counterBytes(counter: number): Buffer {
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32BE(counter);
    return bytes;
  }
}
