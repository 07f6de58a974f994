import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { User } from '../../domain/user/user';
import { OneTimeToken, OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { UserRepository } from '../ports/user.repository';

export type EmailLinkKind = 'email_verification' | 'password_reset';

/** One answer for every reason a link token fails, so the response tells nothing about why. */
export const invalidLinkToken = () => new DomainError('INVALID_VERIFICATION_TOKEN', 'This link is invalid or has expired');

/** Looks up and redeems the single-use tokens of email links. */
@Injectable()
export class EmailLinkTokens {
  constructor(
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly users: UserRepository,
  ) {}

  /**
   * The token's user, when the token is of this kind, belongs to this realm, is unused and
   * unexpired, and the user's address is still the one the link was sent to.
   * @throws DomainError INVALID_VERIFICATION_TOKEN otherwise
   */
  async find(
    realm: Realm,
    kind: EmailLinkKind,
    token: string,
    now: Date,
  ): Promise<{ record: OneTimeToken & { userId: string }; user: User }> {
    const record = await this.oneTimeTokens.find(this.secureTokens.hash(token), kind);
    if (!record?.userId || record.realmId !== realm.id || record.usedAt || record.expiresAt <= now) throw invalidLinkToken();
    const user = await this.users.findById(realm.id, record.userId);
    if (!user || record.email === null || record.email !== user.email) throw invalidLinkToken();
    return { record: { ...record, userId: record.userId }, user };
  }

  /**
   * Uses the token up; exactly one of concurrent callers succeeds. Call inside the transaction
   * of the change the token authorises, so a failed change leaves the token usable.
   * @throws DomainError INVALID_VERIFICATION_TOKEN when it was used or expired meanwhile
   */
  async consume(record: OneTimeToken, now: Date): Promise<void> {
    if (!(await this.oneTimeTokens.consume(record.tokenHash, now))) throw invalidLinkToken();
  }
}
