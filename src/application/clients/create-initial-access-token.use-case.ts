import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { InitialAccessTokens } from './initial-access-tokens';

/** How long an initial access token may live: a minute to 30 days, a day by default. */
export const INITIAL_ACCESS_TOKEN_TTL = { min: 60, max: 2_592_000, default: 86_400 } as const;

@Injectable()
export class CreateInitialAccessTokenUseCase {
  constructor(private readonly tokens: InitialAccessTokens) {}

  /**
   * A token allowing one dynamic registration in the realm (answered once, stored as a hash).
   * @throws DomainError VALIDATION_FAILED (field `expiresInSeconds`)
   */
  execute(input: { realmId: string; expiresInSeconds?: number }): Promise<{ token: string; expiresAt: Date }> {
    const { min, max } = INITIAL_ACCESS_TOKEN_TTL;
    const seconds = input.expiresInSeconds ?? INITIAL_ACCESS_TOKEN_TTL.default;
    if (!Number.isInteger(seconds) || seconds < min || seconds > max) {
      throw DomainError.validation('expiresInSeconds', `must be a whole number from ${min} to ${max}`);
    }
    return this.tokens.issue(input.realmId, seconds);
  }
}
