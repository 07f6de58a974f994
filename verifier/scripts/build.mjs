// Builds the package into dist/: one ES module bundled by esbuild (jose stays an import resolved
// from the app's dependencies) and .d.ts files from tsc. `--no-types` skips the declarations.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = process.env.VERIFIER_OUTDIR ?? join(root, 'dist');

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, 'src/index.ts')],
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['jose'],
  logLevel: 'warning',
});
if (!process.argv.includes('--no-types')) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--outDir', outdir], { stdio: 'inherit' });
}
