import { createPrivateKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { IdTokenKeys } from '../../application/ports/id-token-keys';
import { ACCESS_TOKEN_ALGORITHM } from '../../application/ports/access-tokens';
import { StoredSigningKey, TypeOrmIdTokenKeyStore, TypeOrmSigningKeyStore } from '../persistence/typeorm-signing-key-store';

export const ID_TOKEN_ALGORITHM = 'RS256';
/** Keys are re-read at least this often, so every instance follows a rotation made elsewhere. */
const KEYS_MAX_AGE_MS = 60_000;

export interface OpKeySet {
  /** Changes whenever a key is added or retired: a provider built on another version is rebuilt. */
  version: string;
  /** Private JWKs, current keys first: the RSA keys (ID tokens) and the ES256 keys (access tokens). */
  keys: Record<string, unknown>[];
}

/**
 * The keys of the realms' OpenID providers: the service's ES256 signing keys (the same that sign
 * first-party access tokens, so one JWKS verifies both) and RSA keys for ID tokens (RS256, the
 * OpenID default), in a table of their own, generated on first use and rotated by housekeeping
 * like the ES256 ones.
 */
@Injectable()
export class OpSigningKeys implements IdTokenKeys {
  private cached: { at: number; set: Promise<OpKeySet> } | null = null;

  constructor(
    private readonly accessTokenKeys: TypeOrmSigningKeyStore,
    private readonly idTokenKeys: TypeOrmIdTokenKeyStore,
  ) {}

  /** The current key set, read at most once a minute. */
  keySet(): Promise<OpKeySet> {
    if (this.cached && Date.now() - this.cached.at < KEYS_MAX_AGE_MS) return this.cached.set;
    const set = this.read();
    set.catch(() => (this.cached = null));
    this.cached = { at: Date.now(), set };
    return set;
  }

  async rotateIfOlderThan(cutoff: Date, now: Date): Promise<string | null> {
    // None yet: the first is made when a realm's provider first needs it.
    if ((await this.idTokenKeys.currentCreatedAt()) === null) return null;
    const kid = await this.idTokenKeys.rotateIfOlderThan(cutoff, () => generateRsaKey(now));
    if (kid) this.cached = null;
    return kid;
  }

  private async read(): Promise<OpKeySet> {
    let rsa = await this.idTokenKeys.published();
    if (rsa.length === 0) {
      await this.idTokenKeys.ensureOne(() => generateRsaKey(new Date()));
      rsa = await this.idTokenKeys.published();
    }
    const ec = await this.accessTokenKeys.published();
    const all = [...rsa.map((key) => toJwk(key, ID_TOKEN_ALGORITHM)), ...ec.map((key) => toJwk(key, ACCESS_TOKEN_ALGORITHM))];
    return { version: [...rsa, ...ec].map((key) => `${key.kid}:${key.retiredAt ? 1 : 0}`).join(','), keys: all };
  }
}

function toJwk(key: StoredSigningKey, alg: string): Record<string, unknown> {
  const jwk = createPrivateKey(key.privateKey).export({ format: 'jwk' }) as Record<string, unknown>;
  return { ...jwk, kid: key.kid, alg, use: 'sig' };
}

function generateRsaKey(now: Date): StoredSigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    kid: randomUUID(),
    algorithm: ID_TOKEN_ALGORITHM,
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicJwk: publicKey.export({ format: 'jwk' }) as Record<string, unknown>,
    createdAt: now,
    retiredAt: null,
  };
}
