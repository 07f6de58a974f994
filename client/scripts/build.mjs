// Builds the package into dist/: ES modules bundled by esbuild (the WebAuthn library stays an
// import the app's bundler resolves, loaded only by a dynamic import) and .d.ts files from tsc.
// dist/browser/ is the same for pages without a bundler: no bare import left (the WebAuthn library
// is bundled into a chunk of its own, still loaded only by the dynamic import), minified.
// `--no-types` skips the declarations (the browser tests need only the JavaScript).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = process.env.CLIENT_OUTDIR ?? join(root, 'dist');

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, 'src/index.ts'), join(root, 'src/fingerprint.ts')],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  external: ['@simplewebauthn/browser'],
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
});
await build({
  entryPoints: [join(root, 'src/index.ts'), join(root, 'src/fingerprint.ts')],
  outdir: join(outdir, 'browser'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
});
if (!process.argv.includes('--no-types')) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--outDir', outdir], { stdio: 'inherit' });
}
