import { DpopBinding } from '../../src/application/sign-in/dpop-binding';
import { DpopExpectation, DpopProofCheck, DpopProofVerifier } from '../../src/application/ports/dpop-proof-verifier';
import { DpopReplayStore } from '../../src/application/ports/dpop-replay-store';
import { AppConfig } from '../../src/config/app-config';

/** Accepts proofs written `<jkt>:<jti>` for any request; anything else is refused as malformed. */
export class FakeDpopProofVerifier extends DpopProofVerifier {
  async verify(proof: string, _expected: DpopExpectation): Promise<DpopProofCheck> {
    const match = /^([^:]+):([^:]+)$/.exec(proof);
    return match ? { ok: true, jkt: match[1], jti: match[2] } : { ok: false, reason: 'malformed', message: 'not a proof' };
  }
}

export class InMemoryDpopReplayStore extends DpopReplayStore {
  private readonly seen = new Set<string>();
  async firstUse(jkt: string, jti: string): Promise<boolean> {
    const key = `${jkt}\n${jti}`;
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    return true;
  }
}

export function fakeDpopBinding(config: AppConfig): DpopBinding {
  return new DpopBinding(new FakeDpopProofVerifier(), new InMemoryDpopReplayStore(), config);
}
