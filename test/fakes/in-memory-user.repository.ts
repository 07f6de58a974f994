import { SessionRepository } from '../../src/application/ports/session.repository';
import { FailedLoginOutcome, SignInRefusedError, UserQuery, UserRepository } from '../../src/application/ports/user.repository';
import { DomainError } from '../../src/domain/errors';
import { SessionLifetime } from '../../src/domain/session/session';
import { LockoutPolicy, MfaMethod, User, UserSummary } from '../../src/domain/user/user';
import { InMemoryMfaCredentialRepository } from './in-memory-mfa-credential.repository';

export class InMemoryUserRepository extends UserRepository {
  private readonly rows = new Map<string, User>();

  constructor(users: User[] = []) {
    super();
    for (const user of users) this.rows.set(user.id, User.restore(user.snapshot()));
  }

  async findById(realmId: string, id: string): Promise<User | null> {
    const user = this.rows.get(id);
    return user && user.realmId === realmId ? this.read(user) : null;
  }

  /** The fakes share no database: sessions consulted by findWithLiveSession, when wired. */
  sessions?: SessionRepository;
  /**
   * When wired, a user read has the MFA methods its factors give it, as the database's read does:
   * `totp` with a confirmed TOTP secret, `webauthn` with any security key or passkey.
   */
  credentials?: InMemoryMfaCredentialRepository;

  async findWithLiveSession(realmId: string, userId: string, sessionId: string, now: Date, idle: SessionLifetime): Promise<User | null> {
    const session = await this.sessions?.findById(realmId, sessionId);
    if (!session || session.userId !== userId || !session.isLive(now, idle)) return null;
    return this.findById(realmId, userId);
  }

  async findByIdForUpdate(realmId: string, id: string): Promise<User | null> {
    return this.findById(realmId, id);
  }

  async findByEmail(realmId: string, email: string): Promise<User | null> {
    const user = [...this.rows.values()].find((u) => u.realmId === realmId && u.email === email);
    return user ? this.read(user) : null;
  }

  async insert(user: User): Promise<void> {
    if ([...this.rows.values()].some((u) => u.realmId === user.realmId && u.email === user.email)) {
      throw new DomainError('EMAIL_ALREADY_REGISTERED', 'This email is already registered');
    }
    this.rows.set(user.id, User.restore(user.snapshot()));
  }

  async save(user: User): Promise<void> {
    this.rows.set(user.id, User.restore(user.snapshot()));
  }

  async recordFailedLogin(realmId: string, userId: string, policy: LockoutPolicy, now: Date): Promise<FailedLoginOutcome | null> {
    const user = this.rows.get(userId);
    if (!user || user.realmId !== realmId || user.statusAt(now) !== 'active') return null;
    user.recordFailedLogin(now, policy);
    return { failures: user.failedLoginCount, lockedNow: user.statusAt(now) === 'locked' };
  }

  async recordSuccessfulLogin(realmId: string, userId: string, now: Date, provenPasswordHash?: string): Promise<void> {
    const user = this.rows.get(userId);
    if (!user || user.realmId !== realmId || !user.canAuthenticate(now)) throw new SignInRefusedError();
    if (provenPasswordHash !== undefined && user.passwordHash !== provenPasswordHash) throw new SignInRefusedError();
    user.recordSuccessfulLogin(now);
  }

  async delete(realmId: string, id: string): Promise<boolean> {
    const user = this.rows.get(id);
    if (!user || user.realmId !== realmId) return false;
    return this.rows.delete(id);
  }

  async list(query: UserQuery): Promise<{ users: UserSummary[]; total: number }> {
    const matching = [...this.rows.values()].filter((u) => u.realmId === query.realmId);
    const start = (query.page - 1) * query.limit;
    return { users: matching.slice(start, start + query.limit).map((u) => this.read(u).summary()), total: matching.length };
  }

  async existsWithRole(realmId: string, role: string): Promise<boolean> {
    return [...this.rows.values()].some((u) => u.realmId === realmId && u.roles.includes(role));
  }

  async idsWithRole(realmId: string, role: string): Promise<string[]> {
    return [...this.rows.values()].filter((u) => u.realmId === realmId && u.roles.includes(role)).map((u) => u.id);
  }

  private read(stored: User): User {
    const user = User.restore(stored.snapshot());
    if (this.credentials) {
      const methods: MfaMethod[] = [];
      if (this.credentials.totp.get(user.id)?.confirmedAt) methods.push('totp');
      if ([...this.credentials.webauthn.values()].some((c) => c.userId === user.id)) methods.push('webauthn');
      user.setMfaMethods(methods);
    }
    return user;
  }

  all(): User[] {
    return [...this.rows.values()];
  }
}
