import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import * as bcrypt from 'bcrypt';
import { PasswordHasher } from '../../application/ports/password-hasher';
import { AppConfig } from '../../config/app-config';
import { normalisePassword } from '../../domain/user/password-policy';

/**
 * bcrypt over a SHA-256 pre-hash: bcrypt reads only 72 bytes, so without the pre-hash two
 * passwords sharing their first 72 bytes would be the same password. base64 keeps NUL bytes out.
 * bcrypt runs on the libuv pool, off the event loop.
 */
@Injectable()
export class BcryptPasswordHasher implements PasswordHasher {
  private dummyHash?: Promise<string>;

  constructor(private readonly config: AppConfig) {}

  hash(password: string): Promise<string> {
    return bcrypt.hash(preHash(password), this.config.bcryptCost);
  }

  verify(password: string, hash: string): Promise<boolean> {
    return bcrypt.compare(preHash(password), hash);
  }

  async verifyDummy(password: string): Promise<false> {
    // Unknown email: spend the same time as a real comparison, so timing reveals nothing.
    this.dummyHash ??= bcrypt.hash(preHash('dummy password for timing'), this.config.bcryptCost);
    await bcrypt.compare(preHash(password), await this.dummyHash);
    return false;
  }
}

function preHash(password: string): string {
  return createHash('sha256').update(normalisePassword(password), 'utf8').digest('base64');
}
