import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** An unsigned JWT with the claims the client reads. */
export function fakeJwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'at+jwt' })}.${part(claims)}.`;
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> };

/**
 * A stand-in for the service's auth endpoints, strict where the client's coordination matters:
 * refresh tokens rotate and a rotated one presented again is reuse (no leeway), access tokens
 * expire on the second as the real ones do. Counts what the tests assert on.
 */
export class FakeService {
  ttlSeconds = 2;
  rotations = 0;
  reused = 0;
  meCalls = 0;
  readonly requests: { path: string; body: Record<string, unknown>; headers: Record<string, string> }[] = [];
  /** Sessions whose next refresh answers MFA_REQUIRED. */
  readonly flagged = new Set<string>();
  /** Access tokens answered TOKEN_EXPIRED whatever their exp says. */
  readonly expiredEarly = new Set<string>();
  /** Claims of the next access tokens beyond those the client needs (roles, app_metadata). */
  extraClaims: Record<string, unknown> = {};
  /** A canned answer for a path, used once. */
  readonly next = new Map<string, Answer>();
  private readonly current = new Map<string, string>(); // sid -> current refresh token
  private readonly spent = new Set<string>();
  private readonly bySid = new Map<string, string>(); // mfaToken -> sid
  /** The `timeout` of passkey options (the challenge's lifetime), in milliseconds. */
  passkeyTimeoutMs = 300_000;
  /** Passkey challenges handed out and not yet answered. */
  readonly passkeyChallenges = new Set<string>();
  /** The code challenge of the last emailed link, by link token. */
  readonly emailLinks = new Map<string, string>();

  readonly fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname.replace('/api/v1/auth', '');
    const text = await request.text();
    const body = text ? JSON.parse(text) : {};
    const headers = Object.fromEntries(request.headers.entries());
    this.requests.push({ path, body, headers });
    await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 8));
    const canned = this.next.get(path);
    if (canned) this.next.delete(path);
    const answer = canned ?? this.answer(request.method, path, body, headers.authorization);
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'req-1', ...answer.headers },
    });
  };

  private tokens(sid: string, amr = ['pwd']) {
    const refreshToken = randomBytes(32).toString('base64url');
    this.current.set(sid, refreshToken);
    const iat = Math.floor(Date.now() / 1000);
    const accessToken = fakeJwt({ sub: 'user-1', sid, amr, iat, exp: iat + this.ttlSeconds, jti: randomUUID(), ...this.extraClaims });
    return { accessToken, refreshToken, expiresIn: this.ttlSeconds, tokenType: 'Bearer' };
  }

  private answer(method: string, path: string, body: Record<string, unknown>, authorization?: string): Answer {
    const user = { id: 'user-1', email: 'a@example.com', emailVerified: true, mfaEnabled: false };
    const error = (status: number, code: string, extra: Record<string, unknown> = {}): Answer => ({
      status,
      body: { error: { code, message: code.toLowerCase(), status, ...extra } },
    });
    switch (`${method} ${path}`) {
      case 'POST /login':
        return { status: 200, body: { user, tokens: this.tokens(randomUUID()), requiresMfa: false } };
      case 'POST /refresh': {
        const token = body.refreshToken as string;
        const sid = [...this.current].find(([, t]) => t === token)?.[0];
        if (!sid) {
          if (this.spent.has(token)) this.reused += 1;
          return error(401, 'INVALID_TOKEN');
        }
        if (this.flagged.has(sid)) {
          const mfaToken = randomUUID();
          this.bySid.set(mfaToken, sid);
          return error(401, 'MFA_REQUIRED', { mfaToken });
        }
        this.spent.add(token);
        this.rotations += 1;
        return { status: 200, body: { tokens: this.tokens(sid) } };
      }
      case 'POST /mfa/verify': {
        const sid = this.bySid.get(body.mfaToken as string);
        if (!sid) return error(401, 'INVALID_TOKEN');
        if (body.code !== '123456') return error(401, 'INVALID_MFA_CODE');
        this.bySid.delete(body.mfaToken as string);
        this.flagged.delete(sid);
        this.spent.add(this.current.get(sid)!);
        return { status: 200, body: { user: { ...user, mfaEnabled: true }, tokens: this.tokens(sid, ['pwd', 'otp']) } };
      }
      case 'POST /logout': {
        const sid = [...this.current].find(([, t]) => t === body.refreshToken)?.[0];
        if (!sid) return error(401, 'INVALID_TOKEN');
        this.current.delete(sid);
        return { status: 200, body: { success: true } };
      }
      case 'GET /me': {
        this.meCalls += 1;
        const token = authorization?.replace(/^Bearer /, '') ?? '';
        const claims = token ? JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) : null;
        if (!claims) return error(401, 'INVALID_TOKEN');
        if (this.expiredEarly.has(token) || Math.floor(Date.now() / 1000) >= claims.exp) return error(401, 'TOKEN_EXPIRED');
        return { status: 200, body: { user: { ...user, profile: {}, mfa: { enabled: false, methods: [] } } } };
      }
      case 'POST /passkeys/options': {
        const challengeId = randomUUID();
        this.passkeyChallenges.add(challengeId);
        const options = { challenge: randomBytes(32).toString('base64url'), timeout: this.passkeyTimeoutMs, userVerification: 'required' };
        return { status: 200, body: { challengeId, options } };
      }
      case 'POST /passkeys/verify': {
        if (!this.passkeyChallenges.delete(body.challengeId as string)) return error(401, 'INVALID_CREDENTIALS');
        return { status: 200, body: { user, tokens: this.tokens(randomUUID(), ['hwk', 'mfa']), requiresMfa: false } };
      }
      case 'POST /email-code': {
        if (body.returnTo) this.emailLinks.set(`link-${this.emailLinks.size + 1}`, body.codeChallenge as string);
        return { status: 202, body: { success: true } };
      }
      case 'POST /email-code/verify': {
        const challenge = body.token ? this.emailLinks.get(body.token as string) : undefined;
        const linkOk = challenge !== undefined && createHash('sha256').update(String(body.codeVerifier)).digest('base64url') === challenge;
        if (body.token) this.emailLinks.delete(body.token as string);
        if (!linkOk && body.code !== '12345678') return error(401, 'INVALID_CREDENTIALS');
        return { status: 200, body: { user, tokens: this.tokens(randomUUID(), ['email']), requiresMfa: false } };
      }
      default:
        return error(404, 'NOT_FOUND');
    }
  }
}
