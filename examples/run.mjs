// Runs an example: bundles examples/<folder>/main.ts (or <folder>/<file>.ts) with esbuild
// (packages stay imports, resolved from the project's node_modules) into examples/<folder>/dist/
// and starts it.
//   node examples/run.mjs mcp-server
//   node examples/run.mjs cli-device/serve-api
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const name = process.argv[2];
if (!name || !/^[a-z-]+(\/[a-z-]+)?$/.test(name)) {
  console.error('usage: node examples/run.mjs <example folder>[/<file>], e.g. mcp-server');
  process.exit(2);
}
const [example, entry = 'main'] = name.split('/');
const folder = join(dirname(fileURLToPath(import.meta.url)), example);
const outfile = join(folder, 'dist', `${entry}.mjs`);
await build({
  entryPoints: [join(folder, `${entry}.ts`)],
  outfile,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
await import(pathToFileURL(outfile).href);
