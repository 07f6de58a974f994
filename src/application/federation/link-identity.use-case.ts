import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { decideLink } from '../../domain/federation/account-linking';
import { LinkedIdentity } from '../../domain/federation/linked-identity';
import { Realm } from '../../domain/realm/realm';
import { RecentAuthentication } from '../sign-in/recent-authentication';
import { Clock } from '../ports/clock';
import { FederationTokenRepository } from '../ports/federation-token.repository';
import { IdentityProviderRepository } from '../ports/identity-provider.repository';
import { IdentityInUseError, LinkedIdentityRepository } from '../ports/linked-identity.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { SessionRepository } from '../ports/session.repository';
import { Transaction } from '../ports/transaction';
import { UserRepository } from '../ports/user.repository';
import { LinkCodePayload } from './federation-flow';
import { IdentityLinks } from './identity-links';

export interface LinkIdentityInput {
  realm: Realm;
  /** The signed-in caller. */
  userId: string;
  sessionId: string;
  code: string;
  codeVerifier: string;
  ip: string | null;
}

const invalidCode = () => new DomainError('INVALID_TOKEN', 'The link code is invalid, used or expired');
const inUse = () => new DomainError('INVALID_USER_STATE', 'This account at the provider is linked to another user');

@Injectable()
export class LinkIdentityUseCase {
  constructor(
    private readonly tokens: FederationTokenRepository,
    private readonly providers: IdentityProviderRepository,
    private readonly identities: LinkedIdentityRepository,
    private readonly links: IdentityLinks,
    private readonly users: UserRepository,
    private readonly sessions: SessionRepository,
    private readonly recentSignIn: RecentAuthentication,
    private readonly secureTokens: SecureTokens,
    private readonly tx: Transaction,
    private readonly clock: Clock,
  ) {}

  /**
   * Finishes a link at an identity provider: the link code the callback gave, posted by the user
   * who started the link with the verifier of the start's challenge. The code is spent by any
   * attempt, so a code lured out of a victim's browser is worth nothing to another account, and a
   * guess costs the code. The link is decided under the user's row lock with the caller's session
   * checked again: a takeover of the account (which ends every session under the same lock) leaves
   * a link that raced it nothing. Linking the same account twice answers the existing link.
   * @throws DomainError INVALID_TOKEN (unknown, used, expired or foreign code, another user, a wrong
   *   verifier, a provider removed or disabled, a session ended) | INVALID_USER_STATE (linked to another user) |
   *   FORBIDDEN (a session flagged as used from another device)
   */
  async execute(input: LinkIdentityInput): Promise<LinkedIdentity> {
    const { realm } = input;
    const now = this.clock.now();
    // A session on hold (used from another device) adds no way in; its code is kept for after the step-up.
    await this.recentSignIn.requireUnflagged(realm.id, input.sessionId, 'Linking an account at an identity provider');
    if (typeof input.code !== 'string' || input.code.length < 16 || input.code.length > 256) throw invalidCode();
    const token = await this.tokens.consume(this.secureTokens.hash(input.code), 'link_code', now);
    if (!token || token.realmId !== realm.id) throw invalidCode();
    const payload = token.payload as unknown as LinkCodePayload;
    const verifierMatches = this.secureTokens.equal(this.secureTokens.pkceChallenge(input.codeVerifier), payload.codeChallenge);
    if (!verifierMatches || payload.userId !== input.userId) throw invalidCode();
    const provider = await this.providers.findById(token.providerId);
    if (!provider?.enabled || provider.realmId !== realm.id) throw invalidCode();
    try {
      return await this.tx.run(async () => {
        const user = await this.users.findByIdForUpdate(realm.id, input.userId);
        const live = user ? await this.sessions.isLive(realm.id, input.sessionId, now, realm.policy.sessionLifetime) : false;
        if (!user || !live || !user.canAuthenticate(now)) throw invalidCode();
        const linked = await this.identities.findBySubject(provider.id, payload.subject);
        const decision = decideLink({ linkedUserId: linked?.userId ?? null, callerId: user.id });
        if (decision.kind === 'refuse') throw inUse();
        if (decision.kind === 'linked-already') return linked!;
        const account = { subject: payload.subject, email: payload.email };
        return this.links.link(realm, provider, account, user, { ip: input.ip, now, sessionId: input.sessionId }, {});
      });
    } catch (error) {
      // Another link of the same account committed between the read and the insert.
      if (error instanceof IdentityInUseError) throw inUse();
      throw error;
    }
  }
}
