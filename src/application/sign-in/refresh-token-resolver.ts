import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { RefreshTokenContext, RefreshTokenRepository } from '../ports/refresh-token.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { ClientContext } from './client-context';
import { DpopBinding, DpopRequest } from './dpop-binding';

/**
 * Finds the session and user behind a refresh token, for refresh, logout and the refresh rate
 * limit (which keys on the user), and checks that a session bound to a DPoP key is used by its
 * key holder.
 */
@Injectable()
export class RefreshTokenResolver {
  constructor(
    private readonly refreshTokens: RefreshTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly dpop: DpopBinding,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** The token's context in the realm (whether live or not is the caller's to judge), or null. */
  async resolve(realm: Realm, refreshToken: unknown): Promise<RefreshTokenContext | null> {
    if (!acceptable(refreshToken)) return null;
    const context = await this.refreshTokens.findWithSession(this.secureTokens.hash(refreshToken));
    return context && context.session.realmId === realm.id ? context : null;
  }

  /** Whether `context` is the one of this very token (a context read earlier in the request). */
  isContextOf(context: RefreshTokenContext, refreshToken: unknown): boolean {
    return acceptable(refreshToken) && context.token.tokenHash === this.secureTokens.hash(refreshToken);
  }

  /**
   * A session bound to a DPoP key is used (refreshed, ended) only with a valid proof made with
   * that key; a refusal is audited (`dpop.refused`) and changes nothing else.
   * @throws DomainError INVALID_DPOP_PROOF
   */
  async assertKeyHolder(
    realm: Realm,
    { session, user }: RefreshTokenContext,
    request: DpopRequest | null | undefined,
    client: ClientContext,
    action: 'refresh' | 'logout',
    now: Date = this.clock.now(),
  ): Promise<void> {
    const reason = await this.dpop.refusal(session, request ?? null, now);
    if (!reason) return;
    await this.audit.record({
      type: 'dpop.refused',
      realmId: realm.id,
      userId: user.id,
      sessionId: session.id,
      ip: client.ip,
      at: now,
      details: { action, reason },
    });
    throw new DomainError('INVALID_DPOP_PROOF', 'This session is bound to a DPoP key: a valid proof made with it is required');
  }
}

/** Refresh tokens are 16–256 characters; anything else is looked up nowhere. */
function acceptable(refreshToken: unknown): refreshToken is string {
  return typeof refreshToken === 'string' && refreshToken.length >= 16 && refreshToken.length <= 256;
}
