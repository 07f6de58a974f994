import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { Session, SessionLocation } from '../../domain/session/session';
import { isEmptyAppMetadata } from '../../domain/user/app-metadata';
import { User } from '../../domain/user/user';
import { AccessTokens } from '../ports/access-tokens';
import { GeoIp } from '../ports/geo-ip';
import { OrganizationMemberRepository } from '../ports/organization-member.repository';
import { RefreshTokenRepository } from '../ports/refresh-token.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { SessionRepository } from '../ports/session.repository';
import { SignInHooks } from '../ports/sign-in-hooks';
import { ClientContext } from './client-context';
import { DeviceObservation, DeviceObserver } from './device-observation';
import { DpopBinding, DpopRequest } from './dpop-binding';

export interface TokenSet {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  /** `DPoP` for a session bound to a key, else `Bearer`. */
  tokenType: 'Bearer' | 'DPoP';
  /** Seconds until the session's absolute end: how long the refresh token can live at most. */
  refreshExpiresIn: number;
}

/** The realm's own claims for an access token (its token-claims hook), or null for none. */
export type RealmClaims = Record<string, unknown> | null;

/** Opens sessions and issues the token pair (shared by login, MFA verify and refresh). */
@Injectable()
export class SessionIssuer {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly refreshTokens: RefreshTokenRepository,
    private readonly accessTokens: AccessTokens,
    private readonly secureTokens: SecureTokens,
    private readonly devices: DeviceObserver,
    private readonly geoIp: GeoIp,
    private readonly dpop: DpopBinding,
    private readonly hooks: SignInHooks,
    private readonly memberships: OrganizationMemberRepository,
  ) {}

  /**
   * The key a session opened by this request will be bound to: the thumbprint of its DPoP
   * proof, or null without one. Check it before the session is written.
   * @throws DomainError INVALID_DPOP_PROOF when the request carries a proof that is not valid
   */
  bindingKey(request: DpopRequest | null | undefined, now: Date): Promise<string | null> {
    return this.dpop.bindingKey(request ?? null, now);
  }

  /**
   * The realm's claims for the access token of session `sessionId` (its token-claims hook): null
   * at once when the realm asks for none, else a promise. Ask before a transaction, and hand the
   * answer to `open` or `tokens`: the call waits on the realm's backend, and should hold no
   * database connection meanwhile.
   * @throws DomainError HOOK_FAILED (through the promise)
   */
  askClaims(realm: Realm, user: User, sessionId: string, amr: readonly string[]): Promise<RealmClaims> | null {
    return this.hooks.tokenClaims({ realm, user, sessionId, amr });
  }

  /** Writes a new session and its first refresh token; call inside the login transaction. */
  async open(input: {
    realm: Realm;
    user: User;
    client: ClientContext;
    observation: DeviceObservation;
    amr: string[];
    /** The DPoP key thumbprint the session is bound to (`bindingKey`), or null. */
    dpopJkt?: string | null;
    now: Date;
    /** The session's id, when its claims were asked for before (`askClaims`). */
    sessionId?: string;
    /** The realm's claims asked for before (`askClaims`); asked now when absent. */
    claims?: RealmClaims;
  }): Promise<{ session: Session; tokens: TokenSet }> {
    const session = Session.open({
      id: input.sessionId ?? crypto.randomUUID(),
      realmId: input.realm.id,
      userId: input.user.id,
      device: this.devices.device(input.observation, input.client, crypto.randomUUID()),
      referenceFingerprint: input.observation.fingerprint,
      ip: input.client.ip,
      location: this.geoIp.locate(input.client.ip),
      userAgent: input.client.userAgent?.slice(0, 1024) ?? null,
      amr: input.amr,
      dpopJkt: input.dpopJkt ?? null,
      now: input.now,
      lifetime: input.realm.policy.sessionLifetime,
    });
    await this.sessions.insert(session);
    const refreshToken = this.secureTokens.generate();
    await this.refreshTokens.insert(this.secureTokens.hash(refreshToken), session.id, input.now);
    const tokens = await this.tokens(input.realm, input.user, session, refreshToken, input.now, input.claims);
    return { session, tokens };
  }

  /** A new refresh token for an existing session (MFA re-verification of a flagged session). */
  async reissue(realm: Realm, user: User, session: Session, now: Date): Promise<TokenSet> {
    const refreshToken = this.secureTokens.generate();
    await this.refreshTokens.insert(this.secureTokens.hash(refreshToken), session.id, now);
    return this.tokens(realm, user, session, refreshToken, now);
  }

  /** Where an address is, for the session's `location` (nulls without a GeoIP database). */
  locate(ip: string): SessionLocation {
    return this.geoIp.locate(ip);
  }

  /** `claims`: the realm's, asked for before (`askClaims`); asked now when absent. */
  async tokens(realm: Realm, user: User, session: Session, refreshToken: string, now: Date, claims?: RealmClaims): Promise<TokenSet> {
    const { accessToken, expiresIn, tokenType } = await this.accessToken(realm, user, session, now, claims);
    const end = session.absoluteEnd(realm.policy.sessionLifetime).getTime();
    const refreshExpiresIn = Math.max(0, Math.ceil((end - now.getTime()) / 1000));
    return { accessToken, refreshToken, expiresIn, tokenType, refreshExpiresIn };
  }

  /**
   * An access token of the session. With an active organization it carries `org` with the
   * member's current roles — one indexed read, only then — and none once the user left it.
   * `claims`: the realm's, asked for before (`askClaims`); asked now when absent.
   */
  async accessToken(
    realm: Realm,
    user: User,
    session: Session,
    now: Date,
    claims?: RealmClaims,
  ): Promise<Pick<TokenSet, 'accessToken' | 'expiresIn' | 'tokenType'>> {
    const expiresIn = realm.policy.accessTokenTtlSeconds;
    const org = session.activeOrganizationId ? await this.memberships.claim(realm.id, session.activeOrganizationId, user.id) : null;
    // The realm's own claims, when it has any; the token's own claims are written over them.
    let extra = claims;
    if (extra === undefined) {
      const asked = this.hooks.tokenClaims({
        realm,
        user,
        sessionId: session.id,
        amr: session.amr,
        ...(org ? { organization: { ...org } } : {}),
      });
      extra = asked ? await asked : null;
    }
    const accessToken = await this.accessTokens.issue(
      {
        ...extra,
        sub: user.id,
        realm: realm.id,
        sid: session.id,
        roles: user.roles,
        amr: session.amr,
        ...(isEmptyAppMetadata(user.appMetadata) ? {} : { app_metadata: user.appMetadata }),
        ...(org ? { org } : {}),
        ...(session.dpopJkt ? { cnf: { jkt: session.dpopJkt } } : {}),
      },
      now,
      expiresIn,
    );
    return { accessToken, expiresIn, tokenType: session.dpopBound ? 'DPoP' : 'Bearer' };
  }
}
