import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SecureTokens } from '../../application/ports/secure-tokens';
import { TypeOrmServerSecrets } from '../persistence/typeorm-server-secrets';

@Injectable()
export class NodeSecureTokens implements SecureTokens {
  constructor(private readonly secrets: TypeOrmServerSecrets) {}

  generate(): string {
    return randomBytes(32).toString('base64url');
  }

  hash(token: string): string {
    return createHash('sha256').update(token).digest('base64url');
  }

  async successorOf(token: string): Promise<string> {
    const key = await this.secrets.get('refresh-successor-hmac', () => randomBytes(32).toString('base64'));
    return createHmac('sha256', Buffer.from(key, 'base64')).update(token).digest('base64url');
  }

  numericCode(digits: number): string {
    return Array.from({ length: digits }, () => String(randomInt(10))).join('');
  }

  async keyedHash(value: string): Promise<string> {
    const key = await this.secrets.get('short-code-hmac', () => randomBytes(32).toString('base64'));
    return createHmac('sha256', Buffer.from(key, 'base64')).update(value).digest('base64url');
  }

  pkceChallenge(verifier: string): string {
    return createHash('sha256').update(verifier, 'ascii').digest('base64url');
  }

  equal(a: string, b: string): boolean {
    // Digests have equal length whatever the inputs, so timingSafeEqual never throws or leaks length.
    return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
  }
}
