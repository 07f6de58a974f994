import { Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { DomainError } from '../../domain/errors';
import { Session } from '../../domain/session/session';
import { DpopProofVerifier, DpopRefusalReason } from '../ports/dpop-proof-verifier';
import { DpopReplayStore } from '../ports/dpop-replay-store';

/** A request as DPoP sees it: its `DPoP` header (null when absent), method and path (no query). */
export interface DpopRequest {
  proof: string | null;
  method: string;
  path: string;
}

type Outcome = { ok: true; jkt: string } | { ok: false; reason: DpopRefusalReason; message: string };

const invalidProof = (message: string) => new DomainError('INVALID_DPOP_PROOF', message);

/**
 * Sender-constrained sessions (RFC 9449): a login with a proof binds the new session to the
 * proof's key, and every later use of a bound session's tokens must come with a fresh proof made
 * with that key. A proof is accepted once: its `jti` is remembered for as long as its `iat` could
 * still pass.
 */
@Injectable()
export class DpopBinding {
  constructor(
    private readonly verifier: DpopProofVerifier,
    private readonly replays: DpopReplayStore,
    private readonly config: AppConfig,
  ) {}

  /**
   * The key a new session is bound to: the thumbprint of a login's proof, or null without one.
   * @throws DomainError INVALID_DPOP_PROOF when the request carries a proof that is not valid
   */
  async bindingKey(request: DpopRequest | null, now: Date): Promise<string | null> {
    if (!request?.proof) return null;
    const outcome = await this.check(request, now, null);
    if (!outcome.ok) throw invalidProof(outcome.message);
    return outcome.jkt;
  }

  /**
   * Why the holder of a bound session's refresh token is refused (no proof, a bad, replayed or
   * other key's proof), or null when the session is unbound or the proof is good.
   */
  async refusal(session: Session, request: DpopRequest | null, now: Date): Promise<DpopRefusalReason | null> {
    if (!session.dpopJkt) return null;
    if (!request?.proof) return 'missing';
    const outcome = await this.check(request, now, session.dpopJkt);
    return outcome.ok ? null : outcome.reason;
  }

  /**
   * A resource request with an access token bound to `jkt`: it needs a proof by that key that
   * covers the token (`ath`).
   * @throws DomainError INVALID_DPOP_PROOF
   */
  async assertResourceProof(jkt: string, accessToken: string, request: DpopRequest, now: Date): Promise<void> {
    if (!request.proof) throw invalidProof('A DPoP-bound access token needs a DPoP proof');
    const outcome = await this.check(request, now, jkt, accessToken);
    if (!outcome.ok) throw invalidProof(outcome.message);
  }

  private async check(request: DpopRequest, now: Date, boundTo: string | null, accessToken?: string): Promise<Outcome> {
    const maxAgeSeconds = this.config.dpopProofMaxAgeSeconds;
    const proof = await this.verifier.verify(request.proof!, {
      method: request.method,
      url: `${this.config.apiUrl}${request.path}`,
      accessToken,
      now,
      maxAgeSeconds,
    });
    if (!proof.ok) return proof;
    if (boundTo !== null && proof.jkt !== boundTo) {
      return { ok: false, reason: 'other_key', message: 'The DPoP proof is not made with the key this token is bound to' };
    }
    // An `iat` may lie up to the window ahead or behind: the proof could pass for twice the window.
    if (!(await this.replays.firstUse(proof.jkt, proof.jti, 2 * maxAgeSeconds + 1))) {
      return { ok: false, reason: 'replay', message: 'The DPoP proof was already used' };
    }
    return { ok: true, jkt: proof.jkt };
  }
}
