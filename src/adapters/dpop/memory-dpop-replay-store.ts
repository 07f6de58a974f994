import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { DpopReplayStore } from '../../application/ports/dpop-replay-store';

/**
 * Proof ids seen by this process, each forgotten when its proof could no longer pass. Only proofs
 * with a valid signature reach it, and the refresh and request rate limits bound how fast they
 * come, so the bound below is a guard rather than a working limit.
 */
const MAX_ENTRIES = 200_000;

/** The key of a (key thumbprint, proof id) pair: fixed length, whatever the `jti`. */
export function replayKey(jkt: string, jti: string): string {
  return createHash('sha256').update(`${jkt}\n${jti}`).digest('base64url');
}

export class MemoryDpopReplayStore implements DpopReplayStore {
  private readonly seen = new LRUCache<string, true>({ max: MAX_ENTRIES, ttlAutopurge: false });

  firstUse(jkt: string, jti: string, ttlSeconds: number): Promise<boolean> {
    const key = replayKey(jkt, jti);
    if (this.seen.has(key)) return Promise.resolve(false);
    this.seen.set(key, true, { ttl: ttlSeconds * 1000 });
    return Promise.resolve(true);
  }
}
