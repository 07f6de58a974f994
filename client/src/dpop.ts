/** A DPoP key: the private half never leaves WebCrypto (not extractable); the public half goes in every proof. */
export interface DpopKey {
  privateKey: CryptoKey;
  publicJwk: { kty: string; crv: string; x: string; y: string };
}

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const json64 = (value: unknown) => base64url(encoder.encode(JSON.stringify(value)));

async function generate(): Promise<DpopKey> {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
  const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return { privateKey: pair.privateKey, publicJwk: { kty: kty!, crv: crv!, x: x!, y: y! } };
}

/**
 * The key of `name`: kept in IndexedDB where there is one (the same key for every tab and after a
 * reload, as a bound session needs), in memory elsewhere. Two tabs creating it at once end with
 * the same key: the read and the write happen in one transaction.
 */
export async function dpopKey(name: string): Promise<DpopKey> {
  const candidate = await generate();
  if (typeof indexedDB === 'undefined') return candidate;
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const request = indexedDB.open('identity-client-dpop', 1);
    request.onupgradeneeded = () => request.result.createObjectStore('keys');
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  try {
    return await new Promise<DpopKey>((resolve, reject) => {
      const transaction = db.transaction('keys', 'readwrite');
      const keys = transaction.objectStore('keys');
      let key: DpopKey = candidate;
      const found = keys.get(name);
      found.onsuccess = () => {
        if (found.result) key = found.result as DpopKey;
        else keys.put(candidate, name);
      };
      transaction.oncomplete = () => resolve(key);
      transaction.onerror = () => reject(transaction.error);
    });
  } finally {
    db.close();
  }
}

/**
 * A DPoP proof (RFC 9449) for one request: `htm`, `htu` (the URL without query or fragment),
 * `iat` (the local clock corrected by `clockOffsetMs`), a random `jti` and, with an access token,
 * `ath`. Signed ES256 (WebCrypto's ECDSA signature is already the JWS r‖s form).
 */
export async function dpopProof(
  key: DpopKey,
  method: string,
  url: string,
  accessToken: string | null,
  clockOffsetMs: number,
): Promise<string> {
  const target = new URL(url);
  const claims: Record<string, unknown> = {
    htm: method,
    htu: target.origin + target.pathname,
    iat: Math.floor((Date.now() + clockOffsetMs) / 1000),
    jti: crypto.randomUUID(),
  };
  if (accessToken) claims.ath = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(accessToken))));
  const input = `${json64({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.publicJwk })}.${json64(claims)}`;
  const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key.privateKey, encoder.encode(input));
  return `${input}.${base64url(new Uint8Array(signature))}`;
}
