import { createHash, createHmac, randomBytes, randomInt } from 'node:crypto';
import { AccessTokenClaims, AccessTokens, VerifiedAccessToken } from '../../src/application/ports/access-tokens';
import { AuditEntry, AuditLog } from '../../src/application/ports/audit-log';
import { Clock } from '../../src/application/ports/clock';
import { DetectedDevice, DeviceDetector } from '../../src/application/ports/device-detector';
import { GeoIp } from '../../src/application/ports/geo-ip';
import { ResolvedAddress } from '../../src/application/ports/host-resolver';
import { assertHeaderSafe, MailMessage, MailTransport } from '../../src/application/ports/mail-transport';
import { Mailer, OutgoingEmail } from '../../src/application/ports/mailer';
import { PasswordBlocklist } from '../../src/application/ports/password-blocklist';
import { PasswordHasher } from '../../src/application/ports/password-hasher';
import { QrCodeRenderer } from '../../src/application/ports/qr-code-renderer';
import { ReadinessCheck, ReadinessProbe } from '../../src/application/ports/readiness-probe';
import { SecretCipher } from '../../src/application/ports/secret-cipher';
import { SecureTokens } from '../../src/application/ports/secure-tokens';
import { TotpVerifier } from '../../src/application/ports/totp-verifier';
import { Transaction } from '../../src/application/ports/transaction';
import { WebhookTargetPolicy } from '../../src/application/ports/webhook-target-policy';
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

/**
 * Runs work at once, like `immediateTransaction`, and counts the transactions that ended in an
 * error (which the database would roll back; the fakes keep what was written before it).
 */
export class CountingTransaction extends Transaction {
  committed = 0;
  rolledBack = 0;
  async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      const result = await work();
      this.committed += 1;
      return result;
    } catch (error) {
      this.rolledBack += 1;
      throw error;
    }
  }
  batch<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }
  afterCommit(effect: () => void): void {
    effect();
  }
}

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

/** Every User-Agent is the same desktop browser. */
export class StaticDeviceDetector extends DeviceDetector {
  detect(): DetectedDevice {
    return { browser: 'Chrome', browserMajor: '131', os: 'macOS', osVersion: '15', deviceType: 'browser', name: 'Chrome 131 on macOS' };
  }
}

/** Readable "encryption" bound to its context, so a value moved to another row fails as the real cipher's does. */
export class ReversibleSecretCipher extends SecretCipher {
  async encrypt(plaintext: string, context: string): Promise<string> {
    return `enc(${context}|${plaintext})`;
  }
  async decrypt(ciphertext: string, context: string): Promise<string> {
    const prefix = `enc(${context}|`;
    if (!ciphertext.startsWith(prefix) || !ciphertext.endsWith(')')) throw new Error('bound to another context or tampered with');
    return ciphertext.slice(prefix.length, -1);
  }
}

/** Codes are `<secret>:<step>`; steps are 30-second slots of the clock, one either side accepted. */
export class FakeTotpVerifier extends TotpVerifier {
  generateSecret(): string {
    return `S${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
  }
  keyUri({ secret, issuer, account }: { secret: string; issuer: string; account: string }): string {
    return `otpauth://totp/${encodeURIComponent(issuer)}:${encodeURIComponent(account)}?secret=${secret}&issuer=${encodeURIComponent(issuer)}`;
  }
  matchingStep(secret: string, code: string, now: Date): number | null {
    const step = Math.floor(now.getTime() / 30_000);
    for (const s of [step - 1, step, step + 1]) if (code === `${secret}:${s}`) return s;
    return null;
  }
  /** The code an authenticator shows at `now`. */
  codeAt(secret: string, now: Date): string {
    return `${secret}:${Math.floor(now.getTime() / 30_000)}`;
  }
}

/** The text as a data URL, readable back by the test. */
export class FakeQrCodeRenderer extends QrCodeRenderer {
  async pngDataUrl(text: string): Promise<string> {
    return `data:image/png;base64,${Buffer.from(text).toString('base64')}`;
  }
}

/** Keeps what it is given; `failNext` makes the next send fail as an unreachable server does. */
export class RecordingMailTransport extends MailTransport {
  readonly delivered: MailMessage[] = [];
  private failures: Error[] = [];
  failNext(error: Error = new Error('ECONNREFUSED')): void {
    this.failures.push(error);
  }
  async send(message: MailMessage): Promise<void> {
    assertHeaderSafe(message);
    const failure = this.failures.shift();
    if (failure) throw failure;
    this.delivered.push({ ...message });
  }
}

/** Answers the checks the test sets. */
export class FixedReadinessProbe extends ReadinessProbe {
  constructor(public checks: ReadinessCheck[] = [{ name: 'fake', ok: true, critical: true }]) {
    super();
  }
  async check(): Promise<ReadinessCheck[]> {
    return this.checks.map((c) => ({ ...c }));
  }
}

/** Hosts the test lists as private are refused, as the real policy refuses private addresses; the rest resolve to one public address. */
export class ListedWebhookTargetPolicy extends WebhookTargetPolicy {
  readonly refusedHosts = new Set<string>(['localhost', 'internal.example']);
  readonly checked: string[] = [];
  async check(url: string): Promise<ResolvedAddress> {
    this.checked.push(url);
    const host = new URL(url).hostname;
    if (this.refusedHosts.has(host)) throw DomainError.validation('url', `${host} resolves to a private address`);
    return { address: '203.0.113.10', family: 4 };
  }
}
