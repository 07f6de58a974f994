import http from 'node:http';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { ERROR_STATUS } from '../../src/adapters/http/errors/error-status';
import { ADMIN_ENV, superAdmin } from '../support/admin-flows';
import { login, PASSWORD, register, uniqueEmail } from '../support/flows';
import { listenOnLoopback } from '../support/http-client';
import { mfaToken, userWithTotp } from '../support/mfa';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * Property-based fuzzing of every route the HTTP server registers (read from the Express router at
 * run time, so new routes are fuzzed without touching this file): random JSON bodies, headers
 * (X-Realm-Id, Authorization, Content-Type, X-Device-Fingerprint) and query strings. For every
 * answer: never a 5xx; a 4xx is exactly the contract's envelope with `status` equal to the HTTP
 * status; no error body carries a token. The seed is fixed (FUZZ_SEED overrides it) and printed,
 * so a failure replays exactly.
 */

jest.setTimeout(240_000);

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const MIN_CASES = 2000;
const RENEW_EVERY = 150;

interface Route {
  method: string;
  path: string;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const CODES = new Set(Object.keys(ERROR_STATUS));
const JWT_LIKE = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/;

/** Every route of the Express router (controllers of every module), as registered. */
function routesOf(t: TestApp): Route[] {
  const express = t.app.getHttpAdapter().getInstance() as {
    router: { stack: { route?: { path: string; methods: Record<string, boolean> } }[] };
  };
  const routes: Route[] = [];
  for (const layer of express.router.stack) {
    if (!layer.route) continue;
    for (const [method, on] of Object.entries(layer.route.methods)) {
      // Express also lists a catch-all for every method under the sun; the unknown-route case below covers it.
      if (on && METHODS.includes(method.toUpperCase()) && !layer.route.path.includes('*'))
        routes.push({ method: method.toUpperCase(), path: layer.route.path });
    }
  }
  return routes.sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));
}

function sendRaw(base: string, method: string, path: string, headers: Record<string, string>, body: string | undefined): Promise<Answer> {
  const url = new URL(base);
  const all: Record<string, string> = { ...headers };
  if (body !== undefined) all['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname: url.hostname, port: url.port, path, method, headers: all, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer within 10 s to ${method} ${path}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** What the contract allows an answer to be; returns the violations (empty when fine). */
function violations(answer: Answer, secrets: string[]): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`status ${answer.status}`);
  if (answer.status < 400) return problems;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return [...problems, `not JSON: ${answer.text.slice(0, 200)}`];
  }
  if (!/^application\/json/.test(String(answer.headers['content-type']))) problems.push(`content-type ${answer.headers['content-type']}`);
  const top = body as Record<string, unknown>;
  if (!top || typeof top !== 'object' || Array.isArray(top) || Object.keys(top).join() !== 'error') {
    return [...problems, `top-level keys ${JSON.stringify(top && typeof top === 'object' ? Object.keys(top) : top)}`];
  }
  const error = top.error as Record<string, unknown>;
  const keys = Object.keys(error ?? {});
  for (const required of ['code', 'message', 'status']) if (!keys.includes(required)) problems.push(`missing error.${required}`);
  const extra = keys.filter((k) => !['code', 'message', 'status', 'details', 'mfaToken'].includes(k));
  if (extra.length) problems.push(`extra error keys ${extra.join(',')}`);
  if (typeof error.code !== 'string' || !CODES.has(error.code)) problems.push(`unknown code ${String(error.code)}`);
  if (typeof error.message !== 'string' || error.message.length === 0) problems.push('message not a non-empty string');
  if (error.status !== answer.status) problems.push(`error.status ${String(error.status)} ≠ HTTP ${answer.status}`);
  if (typeof error.code === 'string' && CODES.has(error.code) && ERROR_STATUS[error.code as keyof typeof ERROR_STATUS] !== answer.status) {
    problems.push(`code ${error.code} rendered with ${answer.status}`);
  }
  if ('details' in error) {
    if (error.code !== 'VALIDATION_FAILED') problems.push(`details on ${String(error.code)}`);
    const details = error.details as unknown[];
    if (!Array.isArray(details) || !details.every((d) => d && typeof d === 'object' && Object.keys(d).sort().join() === 'field,message')) {
      problems.push(`malformed details ${JSON.stringify(details)}`);
    }
  }
  if ('mfaToken' in error && error.code !== 'MFA_REQUIRED') problems.push(`mfaToken on ${String(error.code)}`);
  // Field names may appear in validation details; token values and token objects may not.
  if (/"(accessToken|refreshToken|tokens)"\s*:/.test(answer.text) || JWT_LIKE.test(answer.text)) problems.push('a token in an error body');
  if (secrets.some((secret) => secret && answer.text.includes(secret))) problems.push('a live credential in an error body');
  return problems;
}

// ---- arbitraries ---------------------------------------------------------------------------

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 });
const latin1 = fc.string({
  unit: fc
    .integer({ min: 0x20, max: 0xff })
    .filter((c) => c < 0x7f || c > 0x9f)
    .map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
const anyText = fc.oneof(
  printable,
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.constantFrom(
    "' OR '1'='1",
    "'; DROP TABLE users; --",
    '../../etc/passwd',
    '%00',
    '\u0000',
    '\r\nBcc: victim@example.com',
    '{"$gt":""}',
    '${jndi:ldap://x}',
    '<script>alert(1)</script>',
    'x'.repeat(5000),
    '🔑'.repeat(200),
    '',
    ' ',
    'null',
    '-1',
    '1e309',
  ),
);

/** The fields the DTOs know, so random bodies often get past the whitelist and reach the use cases. */
const FIELDS = [
  'email',
  'password',
  'name',
  'deviceFingerprint',
  'refreshToken',
  'mfaToken',
  'code',
  'type',
  'token',
  'currentPassword',
  'newPassword',
  'response',
  'roles',
  'reason',
  'id',
  'emailVerified',
  'realmId',
  'role',
  'mfaEnabled',
  '__proto__',
  'constructor',
];

type Pools = {
  strings: () => string[];
};

function jsonValue(pools: Pools): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    { weight: 3, arbitrary: anyText },
    { weight: 3, arbitrary: fc.constant(null).chain(() => fc.constantFrom(...pools.strings())) },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null)) },
    { weight: 1, arbitrary: fc.constantFrom('totp', 'webauthn', 'recovery', 'sms', 'realm-admin', 'super-admin', '000000', '123456') },
  );
  return fc.oneof(
    { weight: 6, arbitrary: leaf },
    { weight: 1, arbitrary: fc.array(leaf, { maxLength: 4 }) },
    { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...FIELDS, 'a', 'b'), leaf, { maxKeys: 3 }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

function bodyArb(pools: Pools): fc.Arbitrary<string | undefined> {
  const object = fc.dictionary(
    fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...FIELDS) }, { weight: 1, arbitrary: printable }),
    jsonValue(pools),
    {
      maxKeys: 5,
    },
  );
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 8, arbitrary: object.map((o) => JSON.stringify(o)) },
    { weight: 1, arbitrary: fc.json({ maxDepth: 4 }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{',
        '{"email":',
        '[]',
        '"text"',
        '1',
        'null',
        '{"a":'.repeat(50),
        '['.repeat(30_000) + ']'.repeat(30_000),
        '{"email":' + '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_001),
        JSON.stringify({ a: 'x'.repeat(70_000) }),
      ),
    },
    { weight: 1, arbitrary: printable },
  );
}

// ---- the test ------------------------------------------------------------------------------

describe('fuzz: random bodies, headers and query strings at every route (SECURITY.md VAL-01, VAL-02)', () => {
  let t: TestApp;
  let base: string;
  let routes: Route[];
  const live = { accessToken: '', refreshToken: '', mfaToken: '', rootToken: '', userId: '', sessionId: '', email: '' };
  let runsSinceRenewal = 0;

  /** Fresh credentials: an earlier case may have logged the user out, changed its password or deleted it. */
  async function renew(): Promise<void> {
    const user = await register(t, uniqueEmail('fuzz'));
    const signedIn = await login(t, user.email, PASSWORD);
    const withTotp = await userWithTotp(t);
    Object.assign(live, {
      accessToken: signedIn.body.tokens.accessToken,
      refreshToken: signedIn.body.tokens.refreshToken,
      mfaToken: await mfaToken(t, withTotp.email),
      rootToken: (await superAdmin(t)).accessToken,
      userId: user.id,
      sessionId: JSON.parse(Buffer.from(signedIn.body.tokens.accessToken.split('.')[1], 'base64url').toString()).sid,
      email: user.email,
    });
    runsSinceRenewal = 0;
  }

  const pools: Pools = {
    strings: () => [
      live.accessToken,
      live.refreshToken,
      live.mfaToken,
      live.email,
      PASSWORD,
      live.userId,
      live.sessionId,
      'default',
      'master',
    ],
  };

  beforeAll(async () => {
    t = await createTestApp({ env: ADMIN_ENV });
    base = await listenOnLoopback(t);
    routes = routesOf(t);
    await renew();
  });
  afterAll(() => t?.close());

  const authorization = fc.oneof(
    { weight: 2, arbitrary: fc.constant<string | undefined>(undefined) },
    { weight: 3, arbitrary: fc.constantFrom('access', 'root', 'refresh', 'mfa').map((kind) => `Bearer @${kind}`) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('access', 'root')
        .chain((kind) => fc.tuple(fc.constant(kind), fc.nat(2), printable))
        .map(([kind, part, junk]) => `Bearer @${kind}#${part}#${junk}`),
    },
    { weight: 1, arbitrary: printable.map((s) => `Bearer ${s}`) },
    { weight: 1, arbitrary: latin1 },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Basic YWxpY2U6c2VjcmV0',
        'bearer x.y.z',
        'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
      ),
    },
  );

  const realmHeader = fc.oneof(
    { weight: 2, arbitrary: fc.constant<string | undefined>(undefined) },
    { weight: 3, arbitrary: fc.constantFrom('default', 'master') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '../',
        "' OR 1=1--",
        'x'.repeat(10_000),
        'x'.repeat(20_000),
        'no-such-realm',
        'DEFAULT',
        'default ',
        '-x',
      ),
    },
    { weight: 1, arbitrary: latin1 },
  );

  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant<string | undefined>('application/json') },
    { weight: 1, arbitrary: fc.constant<string | undefined>(undefined) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=utf-16',
        'application/json; charset=latin1',
        'application/merge-patch+json',
        'application/xml',
        '*/*',
        'application/json, text/plain',
      ),
    },
    { weight: 1, arbitrary: printable },
  );

  const fingerprint = fc.oneof(
    { weight: 4, arbitrary: fc.constant<string | undefined>(undefined) },
    {
      weight: 2,
      arbitrary: fc
        .dictionary(
          fc.constantFrom('ua', 'canvas', 'screen', 'cores', 'tz', 'x'),
          fc.oneof(printable, fc.integer(), fc.boolean(), fc.constant(null)),
          { maxKeys: 6 },
        )
        .map((o) => JSON.stringify(o)),
    },
    { weight: 1, arbitrary: printable },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{"a":{"b":1}}',
        '[1,2]',
        'x'.repeat(5000),
        JSON.stringify(Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`k${i}`, i]))),
      ),
    },
  );

  const QUERY_KEYS = [
    'page',
    'limit',
    'search',
    'status',
    'emailVerified',
    'sort',
    'userId',
    'type',
    'since',
    'access_token',
    'token',
    'realm',
  ];
  const query = fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    {
      weight: 5,
      arbitrary: fc
        .array(
          fc.tuple(
            fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...QUERY_KEYS) }, { weight: 1, arbitrary: printable }),
            fc.oneof(
              anyText,
              fc.constantFrom(
                '0',
                '1',
                '100',
                '101',
                '-1',
                '1.5',
                'true',
                'false',
                '-createdAt',
                'active',
                'flagged',
                '2026-11-25T00:00:00.000Z',
                'login.failed',
              ),
              fc.constant('@user'),
            ),
          ),
          { maxLength: 5 },
        )
        .map((pairs) => `?${new URLSearchParams(pairs).toString()}`),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '?page[]=1',
        '?limit[a]=1',
        '?page=1&page=2',
        '?%',
        '?%zz=1',
        '?a=%E0%A4%A',
        '?search=%00',
        '?__proto__[x]=1',
        '?' + 'a=1&'.repeat(500),
      ),
    },
  );

  const idValue = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('@user', '@session') },
    { weight: 2, arbitrary: fc.constant(null).map(() => randomUUID()) },
    { weight: 3, arbitrary: anyText.map((s) => encodeURIComponent(s)) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%E0%A4%A', '..', '%2e%2e', 'a%2Fb', '%00', 'x'.repeat(2000)) },
  );

  /** Placeholders become the live credentials and ids at run time (they change at each renewal). */
  function resolve(value: string): string {
    return value
      .replace('@user', live.userId)
      .replace('@session', live.sessionId)
      .replace(/^Bearer @(access|root|refresh|mfa)(?:#(\d)#(.*))?$/s, (_all, kind: string, part?: string, junk?: string) => {
        const token = { access: live.accessToken, root: live.rootToken, refresh: live.refreshToken, mfa: live.mfaToken }[kind as 'access']!;
        if (part === undefined) return `Bearer ${token}`;
        // A real token with one of its parts replaced: a forged header, payload or signature.
        const pieces = token.split('.');
        pieces[Number(part) % pieces.length] = Buffer.from(junk ?? '').toString('base64url');
        return `Bearer ${pieces.join('.')}`;
      });
  }

  function caseArb() {
    return fc.record({
      params: fc.array(idValue, { minLength: 3, maxLength: 3 }),
      query,
      authorization,
      realm: realmHeader,
      contentType,
      fingerprint,
      body: bodyArb(pools),
    });
  }

  it('the checker itself rejects a 5xx, a bare 4xx, an envelope with extra keys and a token in an error', () => {
    const json = { 'content-type': 'application/json; charset=utf-8' };
    const ok = {
      status: 404,
      headers: json,
      text: JSON.stringify({ error: { code: 'NOT_FOUND', message: 'Route not found', status: 404 } }),
    };
    expect(violations(ok, [])).toEqual([]);
    expect(violations({ ...ok, status: 500 }, [])).not.toEqual([]);
    expect(violations({ status: 431, headers: {}, text: '' }, [])).not.toEqual([]);
    expect(
      violations({ ...ok, text: JSON.stringify({ error: { code: 'NOT_FOUND', message: 'x', status: 404, stack: 'at x' } }) }, []),
    ).not.toEqual([]);
    expect(
      violations({ ...ok, text: JSON.stringify({ error: { code: 'NOT_FOUND', message: 'x', status: 404 }, requestId: 'r' }) }, []),
    ).not.toEqual([]);
    expect(violations({ ...ok, text: JSON.stringify({ error: { code: 'NOT_FOUND', message: 'x', status: 400 } }) }, [])).not.toEqual([]);
    expect(
      violations(
        {
          ...ok,
          text: JSON.stringify({ error: { code: 'NOT_FOUND', message: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl', status: 404 } }),
        },
        [],
      ),
    ).not.toEqual([]);
    expect(violations(ok, ['Route not found'])).not.toEqual([]);
  });

  it(`answers ${MIN_CASES}+ random requests across every route with no 5xx, only the error envelope, and no token in an error`, async () => {
    expect(routes.length).toBeGreaterThanOrEqual(40);
    const perRoute = Math.ceil(MIN_CASES / routes.length) + 2;
    // One extra "route": paths and methods the router does not know.
    const unknown: Route = { method: 'FUZZ', path: '/api/v1/auth/:id' };
    const targets = [...routes, unknown];
    console.log(`fuzz: seed ${SEED} (set FUZZ_SEED to change), ${targets.length} routes × ${perRoute} cases`);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let cases = 0;
    const started = Date.now();
    for (const [index, route] of targets.entries()) {
      const seed = SEED + index;
      const result = await fc.check(
        fc.asyncProperty(caseArb(), fc.constantFrom(...METHODS), async (input, otherMethod) => {
          if (runsSinceRenewal++ >= RENEW_EVERY) await renew();
          cases += 1;
          let i = 0;
          const path = route.path.replace(/:[A-Za-z]+/g, () => resolve(input.params[i++ % 3]));
          const headers: Record<string, string> = {};
          if (input.authorization !== undefined) headers.authorization = resolve(input.authorization);
          if (input.realm !== undefined) headers['x-realm-id'] = input.realm;
          if (input.contentType !== undefined) headers['content-type'] = input.contentType;
          if (input.fingerprint !== undefined) headers['x-device-fingerprint'] = input.fingerprint;
          const body = input.body === undefined ? undefined : resolve(input.body);
          const method = route.method === 'FUZZ' ? otherMethod : route.method;
          const answer = await sendRaw(base, method, `${path}${input.query.replace('@user', live.userId)}`, headers, body);
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          const problems = violations(answer, [live.accessToken, live.refreshToken, live.rootToken]);
          if (problems.length) throw new Error(`${method} ${path}: ${problems.join('; ')} — ${answer.status} ${answer.text.slice(0, 300)}`);
        }),
        { seed, numRuns: perRoute, endOnFailure: true },
      );
      if (process.env.FUZZ_VERBOSE) console.log(`${route.method} ${route.path}: ${result.numRuns} runs, ${Date.now() - started} ms`);
      if (result.failed) {
        if (process.env.FUZZ_VERBOSE) console.log(String((result.errorInstance as Error | undefined)?.message ?? result.errorInstance));
        failures.push(
          `${route.method} ${route.path} (seed ${seed}, path ${result.counterexamplePath}): ${String((result.errorInstance as Error | undefined)?.message ?? result.errorInstance)}`,
        );
      }
    }
    const tally = [...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ');
    console.log(`fuzz: ${cases} cases in ${((Date.now() - started) / 1000).toFixed(1)} s — ${tally}`);
    expect(failures).toEqual([]);
    expect(cases).toBeGreaterThanOrEqual(MIN_CASES);
  });
});
