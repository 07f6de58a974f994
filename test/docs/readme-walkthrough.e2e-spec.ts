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
async function runSdkExample(code: string, baseUrl: string, dir: string): Promise<string> {
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
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const { stdout } = await promisify(execFile)(process.execPath, [bundle], { env, timeout: 30_000 });
  return stdout;
}
const STEP_MARK = '@@walkthrough-step@@';

/** Runs the steps in one bash process (variables carry over) and returns what each printed. */
async function runSteps(walkthrough: Walkthrough, baseUrl: string, cwd: string): Promise<string[]> {
  const host = baseUrl.replace(/^http:\/\//, '');
  const script = walkthrough.steps
    .map(
      (step) =>
        `printf '\\n${STEP_MARK}\\n'\n${step.script.replaceAll('http://localhost:3000', baseUrl).replaceAll('localhost:3000', host)}`,
    )
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
  return stdout.split(`\n${STEP_MARK}\n`).slice(1);
}

describe('the README walk-through', () => {
  const walkthrough = extractWalkthrough(readFileSync(README, 'utf8'));
  const dir = mkdtempSync(join(tmpdir(), 'readme-walkthrough-'));
  let t: TestApp;
  let outputs: string[];
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
    outputs = await runSteps(walkthrough, `http://127.0.0.1:${port}`, dir);
    sdkOutput = await runSdkExample(sdkExample.code, `http://127.0.0.1:${port}`, dir).catch((error: Error) => `failed: ${error.message}`);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts the service with the environment the README shows, including the first administrator', () => {
    expect(walkthrough.startEnv).toEqual({
      BOOTSTRAP_ADMIN_EMAIL: expect.stringContaining('@'),
      BOOTSTRAP_ADMIN_PASSWORD: expect.any(String),
    });
    expect(outputs).toHaveLength(walkthrough.steps.length);
  });

  it.each(extractWalkthrough(readFileSync(README, 'utf8')).steps.map((step) => [step.index, step] as const))(
    'step %i prints the answer the README shows',
    (index) => {
      const step = walkthrough.steps[index];
      const printed = outputs[index];
      const values = parseJsonStream(printed);
      const problems =
        values.length === step.expected.length
          ? step.expected.flatMap((shown, i) => compareWithShown(shown, values[i], `answer ${i + 1}`))
          : [`printed ${values.length} JSON value(s), the README shows ${step.expected.length}`];
      if (problems.length) {
        throw new Error(
          `README walk-through, step ${index}:\n${step.script}\nshows:\n${step.shown ?? '(nothing)'}\nprinted:\n${printed}\n\n${problems.join('\n')}`,
        );
      }
    },
  );

  it('runs the SDK example after it, printing what the README shows', () => {
    expect(sdkOutput).toBe(sdkExample.printed);
  });
});
