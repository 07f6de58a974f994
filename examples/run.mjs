// Runs an example: bundles examples/<name>/main.ts with esbuild (packages stay imports, resolved
// from the project's node_modules) into examples/<name>/dist/ and starts it.
//   node examples/run.mjs mcp-server
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const name = process.argv[2];
if (!name || !/^[a-z-]+$/.test(name)) {
  console.error('usage: node examples/run.mjs <example folder>, e.g. mcp-server');
  process.exit(2);
}
const folder = join(dirname(fileURLToPath(import.meta.url)), name);
const outfile = join(folder, 'dist', 'main.mjs');
await build({
  entryPoints: [join(folder, 'main.ts')],
  outfile,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
await import(pathToFileURL(outfile).href);
