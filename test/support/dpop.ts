import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { TestApp } from './test-app';

/** A fresh ES256 key as a browser's DPoP key: its thumbprint, and proofs for requests to `t`. */
export async function dpopKey(t: TestApp) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(publicKey);
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  /** A proof for `method` and `path` on the app's API_URL, bound to `accessToken` when given (`ath`). */
  const proof = (method: string, path: string, accessToken?: string) =>
    new SignJWT({
      htm: method,
      htu: `${t.config.apiUrl}${path}`,
      iat: Math.floor(t.clock.now().getTime() / 1000),
      jti: randomUUID(),
      ...(accessToken ? { ath: createHash('sha256').update(accessToken).digest('base64url') } : {}),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
      .sign(privateKey);
  return { jkt, proof };
}
