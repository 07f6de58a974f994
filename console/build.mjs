// Builds the account console into dist/console (run by the root `npm run build`): the TypeScript
// sources with the client SDK, bundled, split (the WebAuthn code loads only for a ceremony) and
// minified by esbuild into assets/ with content-hashed names, the stylesheet likewise, and
// index.html naming both. `--size` prints the gzipped sizes; it fails above the budget.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
/** Every script of the console together, SDK included, gzipped (level 9). */
export const JS_BUDGET = 60 * 1024;

/** Builds into `outdir` (default dist/console); returns every output with its size and gzipped size. */
export async function buildConsole(outdir = join(root, 'dist', 'console')) {
  const assets = join(outdir, 'assets');
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    entryPoints: { console: join(here, 'src/main.ts'), style: join(here, 'static/console.css') },
    outdir: assets,
    absWorkingDir: root,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome111', 'firefox111', 'safari16.4'],
    minify: true,
    entryNames: '[name]-[hash]',
    chunkNames: 'chunk-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const named = (entry) => relative(assets, join(root, outputs.find(([, o]) => o.entryPoint?.endsWith(entry))[0]));
  const html = readFileSync(join(here, 'static/index.html'), 'utf8')
    .replace('{{script}}', named('src/main.ts'))
    .replace('{{style}}', named('static/console.css'));
  mkdirSync(outdir, { recursive: true });
  writeFileSync(join(outdir, 'index.html'), html);
  return outputs
    .filter(([path]) => !path.endsWith('.map'))
    .map(([path]) => {
      const body = readFileSync(join(root, path));
      return { file: relative(outdir, join(root, path)), bytes: body.length, gzip: gzipSync(body, { level: 9 }).length };
    });
}

/** The gzipped size of all the console's JavaScript, the lazily loaded chunks included. */
export const javascriptGzip = (files) => files.filter((f) => f.file.endsWith('.js')).reduce((sum, f) => sum + f.gzip, 0);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const files = await buildConsole(process.env.CONSOLE_OUTDIR);
  if (process.argv.includes('--size')) {
    for (const f of files) console.log(`${f.file.padEnd(36)} ${String(f.bytes).padStart(7)} B ${String(f.gzip).padStart(7)} B gzip`);
    const total = javascriptGzip(files);
    console.log(`console JavaScript, SDK included: ${total} B gzip (budget ${JS_BUDGET} B)`);
    if (total > JS_BUDGET) {
      console.error('over budget');
      process.exitCode = 1;
    }
  }
}
