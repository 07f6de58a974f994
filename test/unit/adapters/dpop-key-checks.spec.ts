import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { SignJWT, exportJWK } from 'jose';
import { NodeDpopProofVerifier, smallOrderEd25519 } from '../../../src/adapters/crypto/node-dpop-proof-verifier';

const ED25519_SMALL_ORDER_HEX = [
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0100000000000000000000000000000000000000000000000000000000000000',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
];
const URL = 'https://id.example.test/api/v1/auth/refresh';
const now = new Date();
const expected = { method: 'POST', url: URL, now, maxAgeSeconds: 60 };

/** A proof signed with nothing: R = the identity point, S = 0. */
function forged(x: string, jti: string): string {
  const header = Buffer.from(JSON.stringify({ typ: 'dpop+jwt', alg: 'EdDSA', jwk: { kty: 'OKP', crv: 'Ed25519', x } })).toString(
    'base64url',
  );
  const payload = Buffer.from(JSON.stringify({ htm: 'POST', htu: URL, iat: Math.floor(now.getTime() / 1000), jti })).toString('base64url');
  const signature = Buffer.concat([Buffer.from('01', 'hex'), Buffer.alloc(63)]).toString('base64url');
  return `${header}.${payload}.${signature}`;
}

describe('DPoP proof keys', () => {
  it('lists real small-order points: where the runtime accepts such keys, each verifies a signature made without any private key', () => {
    const signature = Buffer.concat([Buffer.from('01', 'hex'), Buffer.alloc(63)]);
    const forgeable = (hex: string) => {
      const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(hex, 'hex').toString('base64url') }, format: 'jwk' });
      return Array.from({ length: 256 }, (_, i) => Buffer.from(`message ${i}`)).some((message) => verify(null, message, key, signature));
    };
    // Some OpenSSL builds refuse small-order keys themselves (then the identity forges nothing);
    // where they do not, every listed point must be one that forges.
    const runtimeChecks = !forgeable(ED25519_SMALL_ORDER_HEX[1]);
    for (const hex of ED25519_SMALL_ORDER_HEX.slice(1, 4)) {
      if (!runtimeChecks) expect([hex, forgeable(hex)]).toEqual([hex, true]);
      expect(smallOrderEd25519(Buffer.from(hex, 'hex').toString('base64url'))).toBe(true);
    }
    // A real key is not on the list.
    const real = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as { x: string };
    expect(smallOrderEd25519(real.x)).toBe(false);
  });

  it('refuses a proof whose Ed25519 key has small order, whatever its signature', async () => {
    const verifier = new NodeDpopProofVerifier();
    const identity = Buffer.from(ED25519_SMALL_ORDER_HEX[1], 'hex').toString('base64url');
    const check = await verifier.verify(forged(identity, 'a'), expected);
    expect(check.ok).toBe(false);
  });

  it('accepts a real key and refuses the same key spelled another way (padding, a dot, standard base64)', async () => {
    const verifier = new NodeDpopProofVerifier();
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const jwk = await exportJWK(publicKey);
    const proof = (x: string, jti: string) =>
      new SignJWT({ htm: 'POST', htu: URL, jti })
        .setProtectedHeader({ typ: 'dpop+jwt', alg: 'EdDSA', jwk: { ...jwk, x } })
        .setIssuedAt(Math.floor(now.getTime() / 1000))
        .sign(privateKey);
    expect((await verifier.verify(await proof(jwk.x!, 'ok'), expected)).ok).toBe(true);
    for (const [i, variant] of [`${jwk.x}=`, `${jwk.x!.slice(0, 10)}.${jwk.x!.slice(10)}`, `${jwk.x}A`].entries()) {
      expect((await verifier.verify(await proof(variant, `v${i}`), expected)).ok).toBe(false);
    }
  });
});
