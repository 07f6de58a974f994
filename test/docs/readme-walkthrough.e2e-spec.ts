import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { LOG_DESTINATION } from '../../src/adapters/http/logging/logging.module';
import { compareWithShown, extractWalkthrough, parseJsonStream, Walkthrough } from '../support/doc-walkthrough';
import { createTestApp, RELAXED_LIMITS, TestApp } from '../support/test-app';

const ROOT = join(__dirname, '..', '..');
const README = join(ROOT, 'README.md');

/** The README's SDK example: its js block and the text block of what it prints. */
function extractSdkExample(markdown: string): { code: string; printed: string } {
  const start = markdown.indexOf('<!-- sdk-example');
  const end = markdown.indexOf('<!-- /sdk-example -->');
  if (start < 0 || end < start) throw new Error('no <!-- sdk-example --> … <!-- /sdk-example --> region');
  const region = markdown.slice(start, end);
  const code = /```js\n([\s\S]*?)```/.exec(region)?.[1];
  const printed = /```text\n([\s\S]*?)```/.exec(region)?.[1];
  if (!code || printed === undefined) throw new Error('the SDK example needs a js block and a text block');
  return { code, printed };
}

/**
 * Bundles the example as a reader's app would use the package (the import resolved to the SDK's
 * sources), against the started service, and runs it with Node.
 */
async function runSdkExample(code: string, baseUrl: string, dir: string, email: string): Promise<string> {
  const entry = join(dir, 'sdk-example.mjs');
  writeFileSync(entry, code.replaceAll('http://localhost:3000', baseUrl));
  const bundle = join(dir, 'sdk-example.bundle.mjs');
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: bundle,
    alias: { '@identity-service/client': join(ROOT, 'client/src/index.ts') },
    external: ['@simplewebauthn/browser'],
    logLevel: 'silent',
  });
  // As the README runs it: `EMAIL=$EMAIL node example.mjs` in the walk-through's shell.
  const env: NodeJS.ProcessEnv = { ...process.env, EMAIL: email };
  delete env.NODE_OPTIONS;
  const { stdout } = await promisify(execFile)(process.execPath, [bundle], { env, timeout: 30_000 });
  return stdout;
}
const STEP_MARK = '@@walkthrough-step@@';

/**
 * Runs the steps in one bash process (variables carry over) and returns what each printed, and
 * the address the run registered (its `EMAIL`, which the SDK example uses after it).
 */
async function runSteps(walkthrough: Walkthrough, baseUrl: string, cwd: string): Promise<{ outputs: string[]; email: string }> {
  const host = baseUrl.replace(/^http:\/\//, '');
  const script = walkthrough.steps
    .map(
      (step) =>
        `printf '\\n${STEP_MARK}\\n'\n${step.script.replaceAll('http://localhost:3000', baseUrl).replaceAll('localhost:3000', host)}`,
    )
    .concat('echo "$EMAIL" > walkthrough-email.txt')
    .join('\n');
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // the reader's `node -pe` runs without Jest's flags
  const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`the walk-through exited with ${code}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  if (stderr.includes('gave up waiting')) throw new Error(`the walk-through gave up waiting:\n${stderr}\nstdout:\n${stdout}`);
  return { outputs: stdout.split(`\n${STEP_MARK}\n`).slice(1), email: readFileSync(join(cwd, 'walkthrough-email.txt'), 'utf8').trim() };
}

/** The walk-through runs twice in a row in one folder against one service, as a reader may run it. */
const RUNS = [1, 2];

describe('the README walk-through, run twice against one service', () => {
  const walkthrough = extractWalkthrough(readFileSync(README, 'utf8'));
  const dir = mkdtempSync(join(tmpdir(), 'readme-walkthrough-'));
  let t: TestApp;
  const runs: { outputs: string[]; email: string }[] = [];
  const sdkExample = extractSdkExample(readFileSync(README, 'utf8'));
  let sdkOutput: string;

  beforeAll(async () => {
    // The service as the README starts it: production rate limits and outbox polling, emails to
    // the log (no SMTP_URL), the log in service.log beside the commands; only bcrypt is cheaper.
    const productionLimits = Object.fromEntries(Object.keys(RELAXED_LIMITS).map((name) => [name, '']));
    t = await createTestApp({
      env: { ...productionLimits, OUTBOX_POLL_INTERVAL_MS: '', LOG_LEVEL: 'info', ...walkthrough.startEnv },
      override: (builder) =>
        builder.overrideProvider(LOG_DESTINATION).useValue(pino.destination({ dest: join(dir, 'service.log'), sync: true })),
    });
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const base = `http://127.0.0.1:${port}`;
    runs.push(await runSteps(walkthrough, base, dir));
    sdkOutput = await runSdkExample(sdkExample.code, base, dir, runs[0].email).catch((error: Error) => `failed: ${error.message}`);
    runs.push(await runSteps(walkthrough, base, dir));
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts the service with the environment the README shows, including the first administrator', () => {
    expect(walkthrough.startEnv).toEqual({
      BOOTSTRAP_ADMIN_EMAIL: expect.stringContaining('@'),
      BOOTSTRAP_ADMIN_PASSWORD: expect.any(String),
    });
    for (const run of runs) expect(run.outputs).toHaveLength(walkthrough.steps.length);
  });

  it('registers a fresh address on each run', () => {
    expect(runs.map((run) => run.email)).toEqual([expect.stringMatching(/^alice-\d+@example\.com$/), expect.stringMatching(/^alice-\d+@/)]);
    expect(runs[0].email).not.toBe(runs[1].email);
  });

  it.each(RUNS.flatMap((run) => extractWalkthrough(readFileSync(README, 'utf8')).steps.map((step) => [run, step.index, step] as const)))(
    'run %i, step %i prints the answer the README shows',
    (run, index) => {
      const step = walkthrough.steps[index];
      const printed = runs[run - 1].outputs[index];
      const values = parseJsonStream(printed);
      const problems =
        values.length === step.expected.length
          ? step.expected.flatMap((shown, i) => compareWithShown(shown, values[i], `answer ${i + 1}`))
          : [`printed ${values.length} JSON value(s), the README shows ${step.expected.length}`];
      if (problems.length) {
        throw new Error(
          `README walk-through, run ${run}, step ${index}:\n${step.script}\nshows:\n${step.shown ?? '(nothing)'}\nprinted:\n${printed}\n\n${problems.join('\n')}`,
        );
      }
    },
  );

  it('runs the SDK example after it, printing what the README shows', () => {
    expect(sdkOutput).toBe(sdkExample.printed);
  });
});
