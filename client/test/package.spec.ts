import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLIENT = join(__dirname, '..');
const TSC = require.resolve('typescript/bin/tsc');

/** A consumer's program: the public API as an app would use it. */
const CONSUMER = `
import { createIdentityClient, IdentityError, localStorageAdapter, type AuthSnapshot, type ErrorCode } from '@identity-service/client';
import { collectFingerprint, type FingerprintComponents } from '@identity-service/client/fingerprint';

const client = createIdentityClient({ baseUrl: 'https://id.example.com', realm: 'acme', transport: 'cookie' });
const storageClient = createIdentityClient({ baseUrl: 'https://id.example.com', realm: 'acme', transport: localStorageAdapter() });
export async function run(): Promise<string> {
  const result = await client.signIn({ email: 'a@example.com', password: 'secret' });
  if (result.kind === 'mfa-required') await client.verifyMfa({ type: 'totp', code: '123456' });
  const snapshot: AuthSnapshot = client.getSnapshot();
  const off = client.on('signed-out', ({ reason }) => console.log(reason));
  off();
  const fp: FingerprintComponents = await collectFingerprint();
  try {
    await storageClient.me();
  } catch (error) {
    if (error instanceof IdentityError) {
      const code: ErrorCode = error.code;
      return code + error.status + (error.retryAfter ?? 0);
    }
  }
  return snapshot.status + (fp.canvas ?? '');
}
// @ts-expect-error: an unknown verification type is refused by the types
client.verifyMfa({ type: 'sms', code: '1' });
`;

describe('the published package', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'client-pack-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('npm pack holds only the built files; its types check under moduleResolution bundler and node16', () => {
    // prepack builds dist/ first.
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
        cwd: CLIENT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    )[0];
    const files: string[] = packed.files.map((file: { path: string }) => file.path).sort();
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/fingerprint.js');
    expect(files).toContain('dist/browser/index.js');
    for (const file of files) expect(file).toMatch(/^(package\.json|dist\/.+\.(js|d\.ts))$/);

    const installed = join(work, 'app/node_modules/@identity-service/client');
    mkdirSync(installed, { recursive: true });
    execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', installed, '--strip-components=1']);
    // The build for pages without a bundler imports nothing by bare name, statically or lazily.
    const browserFiles = files.filter((file) => file.startsWith('dist/browser/') && file.endsWith('.js'));
    expect(browserFiles.length).toBeGreaterThan(2);
    for (const file of browserFiles) {
      const code = readFileSync(join(installed, file), 'utf8');
      const specifiers = [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)["']([^"']+)["']/g)].map((m) => m[1]);
      expect({ file, bare: specifiers.filter((specifier) => !/^\.{1,2}\//.test(specifier)) }).toEqual({ file, bare: [] });
    }
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ type: 'module', sideEffects: false });
    expect(Object.keys(manifest.dependencies)).toEqual(['@simplewebauthn/browser']);
    writeFileSync(join(work, 'app/package.json'), JSON.stringify({ name: 'app', type: 'module', private: true }));
    writeFileSync(join(work, 'app/app.ts'), CONSUMER);

    for (const [module, moduleResolution] of [
      ['esnext', 'bundler'],
      ['node16', 'node16'],
    ]) {
      const args = [TSC, '--noEmit', '--strict', '--skipLibCheck', 'false', '--lib', 'es2022,dom'];
      const run = () =>
        execFileSync(process.execPath, [...args, '--module', module, '--moduleResolution', moduleResolution, 'app.ts'], {
          cwd: join(work, 'app'),
          encoding: 'utf8',
        });
      expect(run).not.toThrow();
    }
    // It runs on Node as an ES module, with memory storage, against a service that answers.
    const script = `
      import { createIdentityClient } from '@identity-service/client';
      const answers = { '/api/v1/auth/password/forgot': [202, { success: true }] };
      const fetch = async (url) => { const [status, body] = answers[new URL(url).pathname]; return new Response(JSON.stringify(body), { status }); };
      const client = createIdentityClient({ baseUrl: 'https://id.example.test', realm: 'acme', fetch });
      await client.forgotPassword('a@example.com');
      await client.ready;
      console.log(client.getSnapshot().status);
    `;
    expect(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: join(work, 'app'), encoding: 'utf8' }).trim()).toBe(
      'signed-out',
    );

    // The check has teeth: a wrong use of the API fails it.
    writeFileSync(
      join(work, 'app/bad.ts'),
      `import { createIdentityClient } from '@identity-service/client';\ncreateIdentityClient({ realm: 'x' });\n`,
    );
    let complaint = '';
    try {
      execFileSync(
        process.execPath,
        [TSC, '--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--lib', 'es2022,dom', 'bad.ts'],
        {
          cwd: join(work, 'app'),
          encoding: 'utf8',
        },
      );
    } catch (error) {
      complaint = (error as { stdout: string }).stdout;
    }
    expect(complaint).toMatch(/baseUrl/);
  });
});
