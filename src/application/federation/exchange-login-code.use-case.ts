import { Injectable } from '@nestjs/common';
import { DomainError } from '../../domain/errors';
import { Realm } from '../../domain/realm/realm';
import { ClientContext } from '../sign-in/client-context';
import { DpopRequest } from '../sign-in/dpop-binding';
import { SessionIssuer } from '../sign-in/session-issuer';
import { SignInContinuation, SignInOutcome } from '../sign-in/sign-in-continuation';
import { Clock } from '../ports/clock';
import { FederationTokenRepository } from '../ports/federation-token.repository';
import { LinkedIdentityRepository } from '../ports/linked-identity.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { UserRepository } from '../ports/user.repository';
import { LoginCodePayload } from './federation-flow';

const invalidCode = () => new DomainError('INVALID_TOKEN', 'The login code is invalid, used or expired');

@Injectable()
export class ExchangeLoginCodeUseCase {
  constructor(
    private readonly tokens: FederationTokenRepository,
    private readonly secureTokens: SecureTokens,
    private readonly identities: LinkedIdentityRepository,
    private readonly users: UserRepository,
    private readonly issuer: SessionIssuer,
    private readonly continuation: SignInContinuation,
    private readonly clock: Clock,
  ) {}

  /**
   * Redeems a login code with the verifier of the challenge the app started with: the code is
   * spent by any attempt, and signs in only while the identity it was issued for is still linked
   * to its user (a takeover, an unlink or the provider's removal since the callback leaves it
   * nothing). Then the sign-in continues as a login does (`amr` `["fed"]`).
   * @throws DomainError INVALID_TOKEN | INVALID_DPOP_PROOF | ACCOUNT_LOCKED | ACCOUNT_SUSPENDED | EMAIL_NOT_VERIFIED
   */
  async execute(input: {
    realm: Realm;
    code: string;
    codeVerifier: string;
    client: ClientContext;
    dpop?: DpopRequest | null;
  }): Promise<SignInOutcome> {
    const { realm } = input;
    // Before the code is spent: a bad proof must not cost the app its code.
    const dpopJkt = await this.issuer.bindingKey(input.dpop, this.clock.now());
    if (typeof input.code !== 'string' || input.code.length < 16 || input.code.length > 256) throw invalidCode();
    const token = await this.tokens.consume(this.secureTokens.hash(input.code), 'login_code', this.clock.now());
    if (!token || token.realmId !== realm.id) throw invalidCode();
    const payload = token.payload as unknown as LoginCodePayload;
    if (!this.secureTokens.equal(this.secureTokens.pkceChallenge(input.codeVerifier), payload.codeChallenge)) throw invalidCode();
    const identity = typeof payload.subject === 'string' ? await this.identities.findBySubject(token.providerId, payload.subject) : null;
    if (!identity || identity.userId !== payload.userId) throw invalidCode();
    const user = await this.users.findById(realm.id, payload.userId);
    if (!user) throw invalidCode();
    let unlinked = false;
    return this.continuation
      .continue(
        {
          realm,
          user,
          // Without a fingerprint of its own, the exchange is taken to carry the one sent at start.
          client: { ...input.client, fingerprint: input.client.fingerprint ?? payload.client?.fingerprint ?? null },
          amr: ['fed'],
          method: 'federated',
          multiFactor: false,
          details: { provider: payload.provider },
          hookAllowed: payload.hookAllowed === true,
          dpopJkt,
          // Decided again on the user's locked row, in the sign-in's transaction: a takeover or an
          // unlink removes the identity (and ends every session) under the same lock, so a code
          // checked before it committed opens nothing after it.
          commit: async () => {
            await this.users.findByIdForUpdate(realm.id, user.id);
            const still = await this.identities.findBySubject(token.providerId, payload.subject);
            unlinked = still?.userId !== user.id;
            return !unlinked;
          },
        },
        'identity_unlinked',
      )
      .catch((error: unknown) => Promise.reject(unlinked ? invalidCode() : error));
  }
}
