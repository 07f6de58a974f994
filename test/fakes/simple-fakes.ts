import { createHash, createHmac, randomBytes, randomInt } from 'node:crypto';
import { AccessTokenClaims, AccessTokens, VerifiedAccessToken } from '../../src/application/ports/access-tokens';
import { AuditEntry, AuditLog } from '../../src/application/ports/audit-log';
import { Clock } from '../../src/application/ports/clock';
import { GeoIp } from '../../src/application/ports/geo-ip';
import { Mailer, OutgoingEmail } from '../../src/application/ports/mailer';
import { PasswordBlocklist } from '../../src/application/ports/password-blocklist';
import { PasswordHasher } from '../../src/application/ports/password-hasher';
import { SecureTokens } from '../../src/application/ports/secure-tokens';
import { Transaction } from '../../src/application/ports/transaction';
import { AuditEvent } from '../../src/domain/audit/audit-event';
import { DomainError } from '../../src/domain/errors';

export class InMemoryAuditLog extends AuditLog {
  readonly entries: AuditEntry[] = [];
  async record(entry: AuditEntry): Promise<void> {
    this.entries.push(entry);
  }
  async list(): Promise<{ events: AuditEvent[]; total: number }> {
    return { events: [], total: this.entries.length };
  }
  types(): string[] {
    return this.entries.map((e) => e.type);
  }
}

export class InMemoryMailer extends Mailer {
  readonly sent: OutgoingEmail[] = [];
  async enqueue(message: OutgoingEmail): Promise<void> {
    this.sent.push(message);
  }
}

/** Reversible stand-in for bcrypt: fast, and tests can see that a dummy comparison happened. */
export class FakePasswordHasher extends PasswordHasher {
  dummyComparisons = 0;
  async hash(password: string): Promise<string> {
    return `hashed:${password.normalize('NFKC')}`;
  }
  async verify(password: string, hash: string): Promise<boolean> {
    return hash === `hashed:${password.normalize('NFKC')}`;
  }
  async verifyDummy(): Promise<false> {
    this.dummyComparisons += 1;
    return false;
  }
}

export class SetPasswordBlocklist extends PasswordBlocklist {
  constructor(private readonly words = new Set(['password1234', 'qwertyuiop123'])) {
    super();
  }
  isCommon(candidate: string): boolean {
    return this.words.has(candidate);
  }
}

export class FakeSecureTokens extends SecureTokens {
  generate(): string {
    return randomBytes(32).toString('base64url');
  }
  hash(token: string): string {
    return createHash('sha256').update(token).digest('base64url');
  }
  async successorOf(token: string): Promise<string> {
    return createHmac('sha256', 'test-key').update(token).digest('base64url');
  }
  equal(a: string, b: string): boolean {
    return a === b;
  }
  numericCode(digits: number): string {
    return Array.from({ length: digits }, () => String(randomInt(10))).join('');
  }
  pkceChallenge(verifier: string): string {
    return createHash('sha256').update(verifier, 'ascii').digest('base64url');
  }
  async keyedHash(value: string): Promise<string> {
    return createHmac('sha256', 'test-code-key').update(value).digest('base64url');
  }
}

/** Unsigned tokens: the claims as JSON. Enough for use cases, which never parse tokens. */
export class FakeAccessTokens extends AccessTokens {
  async issue(claims: AccessTokenClaims, now: Date, ttl: number): Promise<string> {
    const iat = Math.floor(now.getTime() / 1000);
    return JSON.stringify({ ...claims, iat, exp: iat + ttl, jti: crypto.randomUUID() });
  }
  async verify(token: string, now: Date): Promise<VerifiedAccessToken> {
    const claims = JSON.parse(token) as VerifiedAccessToken;
    if (claims.exp <= now.getTime() / 1000) throw new DomainError('TOKEN_EXPIRED', 'expired');
    return claims;
  }
  async jwks() {
    return { keys: [] };
  }
  async ensureKey(): Promise<void> {}
  async rotate(): Promise<string> {
    return 'kid';
  }
  async rotateIfOlderThan(_cutoff: Date, _now: Date): Promise<string | null> {
    return null;
  }
}

export class NullGeoIpFake extends GeoIp {
  locate() {
    return { country: null, city: null };
  }
}

export const immediateTransaction: Transaction = { run: (work) => work(), batch: (work) => work(), afterCommit: (effect) => effect() };

export class FixedClock extends Clock {
  private current: Date;
  constructor(iso = '2026-11-25T12:00:00.000Z') {
    super();
    this.current = new Date(iso);
  }
  now(): Date {
    return new Date(this.current);
  }
  advance(seconds: number): void {
    this.current = new Date(this.current.getTime() + seconds * 1000);
  }
}
