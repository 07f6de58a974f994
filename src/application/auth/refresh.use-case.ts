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
import { ClientContext } from '../sign-in/client-context';
import { DpopRequest } from '../sign-in/dpop-binding';
import { RefreshTokenResolver } from '../sign-in/refresh-token-resolver';
import { SessionGuardian } from '../sign-in/session-guardian';
import { SessionIssuer, TokenSet } from '../sign-in/session-issuer';

export interface RefreshInput {
  realm: Realm;
  refreshToken: string;
  client: ClientContext;
  /** The request's DPoP proof; a bound session needs one made with its key. */
  dpop?: DpopRequest | null;
  /**
   * The token's context as this request already read it (the refresh rate limit keys on its
   * user): used when it is this very token's, so a refresh reads its token once.
   */
  known?: RefreshTokenContext | null;
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
    private readonly resolver: RefreshTokenResolver,
  ) {}

  /**
   * Rotates a refresh token: a new token, the old one dead at once. A token
   * re-presented within the leeway gets the same successor; later, reuse revokes the session.
   * @throws DomainError INVALID_TOKEN | MFA_REQUIRED | REAUTHENTICATION_REQUIRED | VALIDATION_FAILED | INVALID_DPOP_PROOF
   */
  async execute(input: RefreshInput): Promise<{ tokens: TokenSet }> {
    const { realm, refreshToken, client, known } = input;
    const context = known && this.resolver.isContextOf(known, refreshToken) ? known : await this.resolver.resolve(realm, refreshToken);
    if (!context) throw invalidToken();
    const { token, session, user } = context;
    const now = this.clock.now();
    if (!session.isLive(now, realm.policy.sessionLifetime) || !user.canAuthenticate(now)) throw invalidToken();
    // Before anything is spent, flagged or revoked: without the key, a stolen token changes nothing.
    await this.resolver.assertKeyHolder(realm, context, input.dpop, client, 'refresh', now);

    // A token rotated longer ago than the leeway is reuse: revocation, whatever the device.
    const reused = token.rotatedAt !== null && now.getTime() - token.rotatedAt.getTime() > this.config.refreshReuseLeewaySeconds * 1000;
    if (!reused) await this.guardian.check({ realm, user, session, client, now });

    let rotatedAt = token.rotatedAt;
    if (!rotatedAt) {
      // The realm's claims before the token is spent: a hook that fails under `deny` leaves it usable.
      const askedClaims = this.issuer.askClaims(realm, user, session.id, session.amr);
      const claims = askedClaims ? await askedClaims : null;
      const successor = await this.secureTokens.successorOf(refreshToken);
      session.touch(now, client.ip, this.issuer.locate(client.ip));
      // One atomic statement: rotation, successor and the session's use (refresh is a hot path).
      if (await this.refreshTokens.rotate(token.tokenHash, this.secureTokens.hash(successor), session, now)) {
        return { tokens: await this.issuer.tokens(realm, user, session, successor, now, claims) };
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
}
