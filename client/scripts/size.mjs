// Size budget: the core (what `import ... from '@identity-service/client'` loads before any
// WebAuthn ceremony), bundled and minified by esbuild with the WebAuthn library included, then
// gzipped. The library must end in a chunk reached only by a dynamic import. Prints every output;
// exits 1 above the budget or when the WebAuthn code is not split off.
import { gzipSync } from 'node:zlib';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const BUDGET = 10 * 1024;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export async function measure() {
  const result = await build({
    entryPoints: [join(root, 'src/index.ts')],
    outdir: join(root, 'size-out'),
    absWorkingDir: root,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    metafile: true,
    nodePaths: [join(root, '../node_modules')],
    logLevel: 'silent',
  });
  const files = new Map(result.outputFiles.map((file) => [relative(join(root, 'size-out'), file.path), file.contents]));
  const outputs = result.metafile.outputs;
  const name = (path) => relative('size-out', path);
  const entry = Object.keys(outputs).find((path) => outputs[path].entryPoint);
  // The core: the entry and what it imports statically.
  const core = new Set();
  const walk = (path) => {
    if (core.has(path)) return;
    core.add(path);
    for (const imported of outputs[path].imports) if (imported.kind === 'import-statement') walk(imported.path);
  };
  walk(entry);
  const sizes = Object.keys(outputs)
    .filter((path) => files.has(name(path)))
    .map((path) => ({
      file: name(path),
      core: core.has(path),
      webauthn: Object.keys(outputs[path].inputs).some((input) => input.includes('@simplewebauthn/browser')),
      bytes: files.get(name(path)).length,
      gzip: gzipSync(files.get(name(path)), { level: 9 }).length,
    }));
  const coreGzip = sizes.filter((s) => s.core).reduce((sum, s) => sum + s.gzip, 0);
  return {
    sizes,
    coreGzip,
    budget: BUDGET,
    webauthnInCore: sizes.some((s) => s.core && s.webauthn),
    webauthnChunk: sizes.some((s) => !s.core && s.webauthn),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const report = await measure();
  for (const s of report.sizes) {
    console.log(
      `${s.core ? 'core ' : 'lazy '} ${s.file.padEnd(40)} ${String(s.bytes).padStart(7)} B  ${String(s.gzip).padStart(6)} B gzip${s.webauthn ? '  (WebAuthn)' : ''}`,
    );
  }
  console.log(`core total: ${report.coreGzip} B gzip (budget ${report.budget} B)`);
  if (report.coreGzip > report.budget) {
    console.error('core over budget');
    process.exitCode = 1;
  }
  if (report.webauthnInCore || !report.webauthnChunk) {
    console.error('the WebAuthn library must be a separate lazily loaded chunk');
    process.exitCode = 1;
  }
}
