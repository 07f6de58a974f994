import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOG_DESTINATION } from '../../src/adapters/http/logging/logging.module';
import { CapturedLogs } from '../support/captured-logs';
import { DocSnippet, extractSnippets, runOrder } from '../support/doc-snippets';
import { extractWalkthrough } from '../support/doc-walkthrough';
import { TestOidcProvider } from '../support/oidc-provider';
import { createTestApp, TestApp } from '../support/test-app';

/*
 * Every shell snippet of README.md and docs/*.md runs here, against a started service, so a doc
 * cannot drift from the API. Each document gets a service of its own, started as the README
 * starts it (its first administrator, emails to service.log beside the commands), and one bash
 * (`set -euo pipefail`: an undefined variable or a failing command fails it) that first runs the
 * README walk-through quietly — the variables the README defines ($API, $J, pick, wait_for,
 * $EMAIL, $ROOT …) — then the document's snippets in order. A snippet fails when bash fails in
 * it, when one of its requests meets no route (a wrong path) or a 5xx, or when it gets a 4xx whose
 * status neither the snippet nor the answer shown under it names (e.g. `# 409 EMAIL_ALREADY_REGISTERED`). Snippets that cannot
 * run here are marked in the document (```sh no-run, or <!-- no-run: why --> before the block),
 * and counted below, so none is skipped silently.
 *
 * What the documents take for granted, the test provides: the user alice@example.com
 * (password "correct horse battery staple", address verified) that the guides act on; the
 * browser origins docs/operations.md names in CORS_ORIGINS; a local OpenID provider standing in
 * for the issuer https://accounts.google.com; the service on a port of its own instead of 3000.
 */

const ROOT = join(__dirname, '..', '..');
const FILES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const SNIPPETS = FILES.flatMap((file) => extractSnippets(file, read(file)));

/**
 * The snippets marked as not runnable here, per document. A new mark changes this count, so it is
 * a decision made in review, never a silent skip.
 */
const NOT_RUN: Record<string, number> = {
  'README.md': 1,
  'docs/administration.md': 2,
  'docs/agents-mcp.md': 1,
  'docs/clients.md': 1,
  'docs/command-line-tools.md': 1,
  'docs/dpop-and-cookies.md': 1,
  'docs/extending.md': 1,
  'docs/hooks.md': 1,
  'docs/mfa.md': 1,
  'docs/operations.md': 4,
  'docs/performance.md': 1,
  'docs/realm-settings.md': 1,
  'docs/sdk.md': 1,
  'docs/security.md': 3,
  'docs/webhooks.md': 1,
};

const ALICE = { email: 'alice@example.com', password: 'correct horse battery staple', name: 'Alice Smith' };
const GOOGLE = 'https://accounts.google.com';
const MARK = 'doc-snippet-';

/** A log destination that keeps what it is given and appends it to service.log, as `npm start >> service.log` would. */
class ServiceLog extends CapturedLogs {
  constructor(private readonly file: string) {
    super();
  }
  override _write(chunk: Buffer, encoding: string, done: () => void): void {
    appendFileSync(this.file, chunk);
    super._write(chunk, encoding, done);
  }
}

interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** Index (in run order) of the snippet bash was in when it stopped, or null when it finished. */
  failedAt: number | null;
  /** Per snippet (run order): the problems of its requests. */
  problems: string[][];
}

/** A stand-in for a person waiting for the next TOTP code: a code is never used twice within a 30-second step. */
const OATHTOOL = `
oathtool() {
  local offset now step last
  offset=$(cat "$DOC_CLOCK_OFFSET")
  now=$(( $(date +%s) + offset ))
  step=$(( now / 30 ))
  last=$(cat "$DOC_CLOCK_OFFSET.step" 2>/dev/null || echo 0)
  if [ "$step" -le "$last" ]; then offset=$(( offset + 30 * (last - step + 1) )); echo "$offset" > "$DOC_CLOCK_OFFSET"; now=$(( $(date +%s) + offset )); step=$(( now / 30 )); fi
  echo "$step" > "$DOC_CLOCK_OFFSET.step"
  command oathtool --now=@$now "$@"
}
`;

function substitute(script: string, base: string, idpIssuer: string | null): string {
  let out = script.replaceAll('http://localhost:3000', base).replaceAll('localhost:3000', base.replace(/^http:\/\//, ''));
  if (idpIssuer) out = out.replaceAll(GOOGLE, idpIssuer);
  return out;
}

async function runDocument(file: string, snippets: DocSnippet[]): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'doc-snippets-'));
  const logs = new ServiceLog(join(dir, 'service.log'));
  const walkthrough = extractWalkthrough(read('README.md'));
  const needsIdp = snippets.some((s) => s.body.includes(GOOGLE));
  let idp: TestOidcProvider | null = null;
  let t: TestApp | null = null;
  try {
    if (needsIdp) idp = await TestOidcProvider.start({ redirectUris: ['http://localhost/callback'], accounts: {} });
    t = await createTestApp({
      env: {
        ...walkthrough.startEnv,
        LOG_LEVEL: 'info',
        OUTBOX_POLL_INTERVAL_MS: '50',
        CORS_ORIGINS: 'https://app.example.com,http://localhost:5173',
        IDP_ALLOW_HTTP: 'true',
        IDP_ALLOW_PRIVATE_NETWORKS: 'true',
      },
      override: (builder) => builder.overrideProvider(LOG_DESTINATION).useValue(logs),
    });
    // The service's clock and the oathtool stand-in share an offset: waiting for the next code moves both.
    const offsetFile = join(dir, 'clock-offset');
    writeFileSync(offsetFile, '0');
    t.clock.now = () => new Date(Date.now() + Number(readFileSync(offsetFile, 'utf8')) * 1000);
    await t.app.listen(0, '127.0.0.1');
    const base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;

    const alice = await t.api().post('/api/v1/auth/register').send(ALICE);
    if (alice.status !== 201) throw new Error(`registering ${ALICE.email}: ${alice.status} ${JSON.stringify(alice.body)}`);
    await t.dataSource.query(`UPDATE users SET email_verified = true WHERE email = $1`, [ALICE.email]);

    const marker = (i: number) => `echo '@@${MARK}${i}@@' >&2; curl -s -o /dev/null "${base}/health/live" -H 'X-Request-Id: ${MARK}${i}'`;
    const prelude =
      file === 'README.md' ? '' : `{\n${walkthrough.steps.map((step) => substitute(step.script, base, null)).join('\n')}\n} > /dev/null\n`;
    const script = [
      'set -euo pipefail',
      `DOC_CLOCK_OFFSET=${JSON.stringify(offsetFile)}`,
      OATHTOOL,
      prelude,
      ...snippets.flatMap((snippet, i) => [marker(i), substitute(snippet.body, base, idp?.issuer ?? null)]),
      marker(snippets.length),
    ].join('\n');
    const env = { ...process.env };
    delete env.NODE_OPTIONS; // the reader's `node -pe` runs without Jest's flags
    const child = spawn('bash', ['-c', script], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(timer);
    await new Promise((resolve) => setTimeout(resolve, 50));

    const reached = [...stderr.matchAll(new RegExp(`@@${MARK}(\\d+)@@`, 'g'))].map((m) => Number(m[1]));
    const last = reached.length ? Math.max(...reached) : -1;
    const failedAt = exitCode === 0 ? null : last;

    // Each request after the marker of snippet i, and before the next marker, is the snippet's.
    const problems: string[][] = snippets.map(() => []);
    let current = -1;
    for (const line of logs.lines()) {
      if (line.msg !== 'request completed') continue;
      const requestId = String(line.requestId ?? '');
      if (requestId.startsWith(MARK)) {
        current = Number(requestId.slice(MARK.length));
        continue;
      }
      if (current < 0 || current >= snippets.length) continue;
      const req = line.req as { method: string; path: string };
      const status = (line.res as { statusCode: number }).statusCode;
      const what = `${req.method} ${req.path} → ${status}`;
      const named = `${snippets[current].body}\n${snippets[current].answer ?? ''}`;
      if (status === 404 && !line.route) problems[current].push(`${what}: no such path`);
      else if (status >= 500) problems[current].push(`${what}: a server error`);
      else if (status >= 400 && !named.includes(String(status))) problems[current].push(`${what}, a status the snippet does not name`);
    }
    return { exitCode, stdout, stderr, failedAt, problems };
  } finally {
    await t?.close();
    await idp?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('shell snippets of README.md and docs/', () => {
  it('finds the snippets, and every one it does not run is marked so in its document', () => {
    const counts: Record<string, number> = {};
    for (const s of SNIPPETS.filter((s) => s.noRun !== null)) counts[s.file] = (counts[s.file] ?? 0) + 1;
    expect(counts).toEqual(NOT_RUN);
    const run = SNIPPETS.filter((s) => s.noRun === null).length;
    const marked = SNIPPETS.length - run;
    expect({ run, marked }).toEqual({ run: expect.any(Number), marked: Object.values(NOT_RUN).reduce((a, b) => a + b, 0) });
    expect(run).toBeGreaterThan(marked);
  });

  const documents = FILES.map((file) => [file, runOrder(SNIPPETS.filter((s) => s.file === file))] as const).filter(([, s]) => s.length);

  describe.each(documents)('%s', (file, snippets) => {
    let result: RunResult;
    beforeAll(async () => {
      result = await runDocument(file, snippets);
    }, 180_000);

    it.each(snippets.map((snippet, i) => [snippet.line, i] as const))('runs the snippet at line %i', (_line, i) => {
      const snippet = snippets[i];
      const where = `${file}:${snippet.line}`;
      if (result.failedAt === i) {
        throw new Error(`${where} failed (bash exited ${result.exitCode}):\n${snippet.body}\nstderr:\n${result.stderr.slice(-3000)}`);
      }
      if (result.failedAt !== null && result.failedAt < i)
        throw new Error(`${where} did not run: the snippet at index ${result.failedAt} failed before it`);
      if (result.problems[i].length) {
        throw new Error(`${where}:\n${snippet.body}\n${result.problems[i].join('\n')}\nprinted (the end):\n${result.stdout.slice(-1500)}`);
      }
    });
  });
});
