import { Injectable } from '@nestjs/common';
import { AccessTokens } from '../ports/access-tokens';
import { Clock } from '../ports/clock';

@Injectable()
export class RotateSigningKeysUseCase {
  constructor(
    private readonly accessTokens: AccessTokens,
    private readonly clock: Clock,
  ) {}

  /**
   * Makes a new signing key current. The JWKS keeps publishing the previous key, so tokens it
   * signed keep verifying until they expire. Returns the new key's `kid`.
   */
  execute(): Promise<string> {
    return this.accessTokens.rotate(this.clock.now());
  }
}
