import { Injectable } from '@nestjs/common';
import { Realm } from '../../domain/realm/realm';
import { User } from '../../domain/user/user';
import { OneTimeToken, OneTimeTokenRepository } from '../ports/one-time-token.repository';
import { SecureTokens } from '../ports/secure-tokens';
import { ClientContext } from './client-context';

export const MFA_TOKEN_TTL_SECONDS = 300;
export const MFA_TOKEN_MAX_ATTEMPTS = 5;

/** How a sign-in proved its first factor (`login.succeeded`'s `details.method`). */
export type SignInMethod = 'password' | 'federated' | 'passkey' | 'email-code';

/** What an mfaToken carries: the login waiting for its second factor. */
export interface PendingLogin {
  purpose: 'login' | 'reverify';
  client: ClientContext;
  /** The first factor's `amr`, which the second factor's value follows; `["pwd"]` when absent. */
  amr?: string[];
  method?: SignInMethod;
  /** Audited with the sign-in once complete (the provider's alias…). */
  details?: Record<string, unknown>;
  /** For `reverify`: the flagged session the verification restores. */
  sessionId?: string;
  /** The current WebAuthn challenge bound to this mfaToken, if options were requested. */
  webauthnChallenge?: string;
}

/** Opaque, single-use, 5-minute MFA challenge tokens, stored only as hashes. */
@Injectable()
export class MfaChallenges {
  constructor(
    private readonly oneTimeTokens: OneTimeTokenRepository,
    private readonly secureTokens: SecureTokens,
  ) {}

  async create(input: {
    realm: Realm;
    user: User;
    client: ClientContext;
    purpose: PendingLogin['purpose'];
    sessionId?: string;
    amr?: string[];
    method?: SignInMethod;
    details?: Record<string, unknown>;
    now: Date;
  }): Promise<string> {
    const token = this.secureTokens.generate();
    const pending: PendingLogin = {
      purpose: input.purpose,
      client: input.client,
      ...(input.amr ? { amr: input.amr } : {}),
      ...(input.method ? { method: input.method } : {}),
      ...(input.details ? { details: input.details } : {}),
      ...(input.sessionId ? { sessionId: input.sessionId } : {}),
    };
    await this.oneTimeTokens.insert({
      tokenHash: this.secureTokens.hash(token),
      realmId: input.realm.id,
      userId: input.user.id,
      kind: 'mfa',
      email: null,
      payload: pending as unknown as Record<string, unknown>,
      attempts: 0,
      createdAt: input.now,
      expiresAt: new Date(input.now.getTime() + MFA_TOKEN_TTL_SECONDS * 1000),
      usedAt: null,
    });
    return token;
  }

  /** The stored challenge for a presented mfaToken, or null when unknown. */
  find(token: string): Promise<OneTimeToken | null> {
    return this.oneTimeTokens.find(this.secureTokens.hash(token), 'mfa');
  }
}
