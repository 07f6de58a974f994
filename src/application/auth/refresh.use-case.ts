import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { AuditLog } from '../ports/audit-log';
import { Clock } from '../ports/clock';
import { RefreshTokenContext, RefreshTokenRepository } from '../ports/refresh-token.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { ClientContext } from './client-context';
import { DpopBinding, DpopRequest } from './dpop-binding';
import { SessionGuardian } from './session-guardian';
import { SessionIssuer, TokenSet } from './session-issuer';

export interface RefreshInput {
  realm: Realm;
  refreshToken: string;
  client: ClientContext;
  /** The request's DPoP proof; a bound session needs one made with its key. */
  dpop?: DpopRequest | null;
}

const invalidToken = () => new DomainError('INVALID_TOKEN', 'The refresh token is invalid');

@Injectable()
export class RefreshUseCase {
  constructor(
    private readonly refreshTokens: RefreshTokenRepository,
    private readonly sessions: SessionRepository,
    private readonly secureTokens: SecureTokens,
    private readonly issuer: SessionIssuer,
    private readonly guardian: SessionGuardian,
    private readonly audit: AuditLog,
    private readonly tx: Transaction,
    private readonly clock: Clock,
    private readonly config: AppConfig,
    private readonly dpop: DpopBinding,
  ) {}

  /** Finds the live context of a refresh token (shared with rate limiting, which keys on its user). */
  async resolve(realm: Realm, refreshToken: string): Promise<RefreshTokenContext | null> {
    if (!this.acceptable(refreshToken)) return null;
    const context = await this.refreshTokens.findWithSession(this.secureTokens.hash(refreshToken));
    return context && context.session.realmId === realm.id ? context : null;
  }

  /** Refresh tokens are 16–256 characters; anything else is looked up nowhere. */
  private acceptable(refreshToken: unknown): refreshToken is string {
    return typeof refreshToken === 'string' && refreshToken.length >= 16 && refreshToken.length <= 256;
  }

  /**
   * Rotates a refresh token: a new token, the old one dead at once. A token
   * re-presented within the leeway gets the same successor; later, reuse revokes the session.
   * @throws DomainError INVALID_TOKEN | MFA_REQUIRED | REAUTHENTICATION_REQUIRED | VALIDATION_FAILED | INVALID_DPOP_PROOF
   */
  async execute(input: RefreshInput, resolved?: RefreshTokenContext | null): Promise<{ tokens: TokenSet }> {
    const { realm, refreshToken, client } = input;
    // The context the rate limiter resolved is used only if it is this very token's.
    const context =
      resolved !== undefined &&
      (resolved === null ? !this.acceptable(refreshToken) : resolved.token.tokenHash === this.secureTokens.hash(refreshToken))
        ? resolved
        : await this.resolve(realm, refreshToken);
    if (!context) throw invalidToken();
    const { token, session, user } = context;
    const now = this.clock.now();
    if (!session.isLive(now, realm.policy.sessionLifetime) || !user.canAuthenticate(now)) throw invalidToken();
    // Before anything is spent, flagged or revoked: without the key, a stolen token changes nothing.
    await this.assertKeyHolder(realm, context, input.dpop, client, 'refresh', now);

    // A token rotated longer ago than the leeway is reuse: revocation, whatever the device.
    const reused = token.rotatedAt !== null && now.getTime() - token.rotatedAt.getTime() > this.config.refreshReuseLeewaySeconds * 1000;
    if (!reused) await this.guardian.check({ realm, user, session, client, now });

    let rotatedAt = token.rotatedAt;
    if (!rotatedAt) {
      const successor = await this.secureTokens.successorOf(refreshToken);
      session.touch(now, client.ip, this.issuer.locate(client.ip));
      // One atomic statement: rotation, successor and the session's use (refresh is a hot path).
      if (await this.refreshTokens.rotate(token.tokenHash, this.secureTokens.hash(successor), session, now)) {
        return { tokens: await this.issuer.tokens(realm, user, session, successor, now) };
      }
      rotatedAt = (await this.refreshTokens.rotatedAt(token.tokenHash)) ?? now;
    }

    if (now.getTime() - rotatedAt.getTime() <= this.config.refreshReuseLeewaySeconds * 1000) {
      // Two tabs racing: the loser gets the very token the winner got, derived, never stored.
      const successor = await this.secureTokens.successorOf(refreshToken);
      return { tokens: await this.issuer.tokens(realm, user, session, successor, now) };
    }

    await this.tx.run(async () => {
      await this.sessions.revoke(realm.id, session.id, now, 'refresh_token_reuse');
      await this.audit.record({
        type: 'refresh.reused',
        realmId: realm.id,
        userId: user.id,
        sessionId: session.id,
        ip: client.ip,
        at: now,
        details: { rotatedAt: rotatedAt.toISOString() },
      });
    });
    throw invalidToken();
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
    now: Date,
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
