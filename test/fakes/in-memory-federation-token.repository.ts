import { FederationToken, FederationTokenKind, FederationTokenRepository } from '../../src/application/ports/federation-token.repository';

export class InMemoryFederationTokenRepository extends FederationTokenRepository {
  readonly rows = new Map<string, FederationToken & { usedAt: Date | null }>();

  async insert(token: FederationToken): Promise<void> {
    if (this.rows.has(token.tokenHash)) throw new Error(`duplicate federation token ${token.tokenHash}`);
    this.rows.set(token.tokenHash, { ...token, payload: structuredClone(token.payload), usedAt: null });
  }

  async consume(tokenHash: string, kind: FederationTokenKind, now: Date): Promise<FederationToken | null> {
    const row = this.rows.get(tokenHash);
    if (!row || row.kind !== kind || row.usedAt || row.expiresAt <= now) return null;
    row.usedAt = now;
    const { usedAt: _usedAt, ...token } = row;
    return { ...token, payload: structuredClone(token.payload) };
  }
}
