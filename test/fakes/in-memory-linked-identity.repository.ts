import { IdentityInUseError, LinkedIdentityRepository } from '../../src/application/ports/linked-identity.repository';
import { LinkedIdentity } from '../../src/domain/federation/linked-identity';

export class InMemoryLinkedIdentityRepository extends LinkedIdentityRepository {
  readonly rows = new Map<string, LinkedIdentity>();

  constructor(identities: LinkedIdentity[] = []) {
    super();
    for (const identity of identities) this.rows.set(identity.id, { ...identity });
  }

  async findBySubject(providerId: string, subject: string): Promise<LinkedIdentity | null> {
    const found = [...this.rows.values()].find((i) => i.providerId === providerId && i.subject === subject);
    return found ? { ...found } : null;
  }

  async listForUser(realmId: string, userId: string): Promise<LinkedIdentity[]> {
    return (await this.listForUsers(realmId, [userId])).get(userId) ?? [];
  }

  async listForUsers(realmId: string, userIds: readonly string[]): Promise<Map<string, LinkedIdentity[]>> {
    const byUser = new Map<string, LinkedIdentity[]>();
    const sorted = [...this.rows.values()].sort((a, b) => a.linkedAt.getTime() - b.linkedAt.getTime());
    for (const identity of sorted) {
      if (identity.realmId !== realmId || !userIds.includes(identity.userId)) continue;
      byUser.set(identity.userId, [...(byUser.get(identity.userId) ?? []), { ...identity }]);
    }
    return byUser;
  }

  async insert(identity: LinkedIdentity): Promise<void> {
    if (await this.findBySubject(identity.providerId, identity.subject)) throw new IdentityInUseError();
    this.rows.set(identity.id, { ...identity });
  }

  async recordUse(id: string, email: string | null, now: Date): Promise<void> {
    const identity = this.rows.get(id);
    if (identity) this.rows.set(id, { ...identity, email, lastUsedAt: now });
  }

  async delete(realmId: string, userId: string, id: string): Promise<boolean> {
    const identity = this.rows.get(id);
    if (!identity || identity.realmId !== realmId || identity.userId !== userId) return false;
    return this.rows.delete(id);
  }

  async deleteAllForUser(realmId: string, userId: string): Promise<number> {
    return this.deleteWhere((identity) => identity.realmId === realmId && identity.userId === userId);
  }

  async deleteAllForProvider(providerId: string): Promise<number> {
    return this.deleteWhere((identity) => identity.providerId === providerId);
  }

  private deleteWhere(matches: (identity: LinkedIdentity) => boolean): number {
    const doomed = [...this.rows].filter(([, identity]) => matches(identity));
    for (const [id] of doomed) this.rows.delete(id);
    return doomed.length;
  }
}
