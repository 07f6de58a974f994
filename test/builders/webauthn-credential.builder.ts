import { WebauthnCredential } from '../../src/application/ports/mfa-credential.repository';

/** A stored passkey of `userId` (its key material is a placeholder: for tests that never verify a signature). */
export function aPasskey(userId: string, now: Date, overrides: Partial<WebauthnCredential> = {}): WebauthnCredential {
  return {
    id: 'cred-1',
    userId,
    name: 'passkey',
    publicKey: new Uint8Array([1]),
    counter: 0,
    transports: [],
    deviceType: 'multiDevice',
    backedUp: true,
    passkey: true,
    createdAt: now,
    lastUsedAt: null,
    disabledAt: null,
    disabledReason: null,
    ...overrides,
  };
}
