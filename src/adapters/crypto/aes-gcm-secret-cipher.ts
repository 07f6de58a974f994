import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SecretCipher } from '../../application/ports/secret-cipher';
import { AppConfig } from '../../config/app-config';
import { TypeOrmServerSecrets } from '../persistence/typeorm-server-secrets';

const VERSION = 'v1';
const KEY_SECRET_NAME = 'mfa-encryption-key';

/**
 * AES-256-GCM with a random 96-bit IV per value and the context (owner id) as additional
 * authenticated data. Stored as `v1.<iv>.<tag>.<ciphertext>` (base64url). The key is
 * `MFA_ENCRYPTION_KEY`, or one generated on first use and kept in the database.
 */
@Injectable()
export class AesGcmSecretCipher implements SecretCipher {
  private key: Promise<Buffer> | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly secrets: TypeOrmServerSecrets,
  ) {}

  async encrypt(plaintext: string, context: string): Promise<string> {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', await this.keyBytes(), iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  async decrypt(ciphertext: string, context: string): Promise<string> {
    const [version, iv, tag, body] = ciphertext.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) throw new Error('unrecognised ciphertext');
    const decipher = createDecipheriv('aes-256-gcm', await this.keyBytes(), Buffer.from(iv, 'base64url'), { authTagLength: 16 });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  }

  private keyBytes(): Promise<Buffer> {
    if (!this.key) {
      this.key = this.config.mfaEncryptionKey
        ? Promise.resolve(Buffer.from(this.config.mfaEncryptionKey, 'base64'))
        : this.secrets.get(KEY_SECRET_NAME, () => randomBytes(32).toString('base64')).then((value) => Buffer.from(value, 'base64'));
      this.key.catch(() => (this.key = null));
    }
    return this.key;
  }
}
