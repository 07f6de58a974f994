// npm run dev: compiles in watch mode and restarts the service after every successful build,
// with the development profile (APP_PROFILE=development) unless the environment says otherwise.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
// `--out-dir <dir>` compiles somewhere other than dist/ (tests use it to leave a build alone).
const outDirFlag = process.argv.indexOf('--out-dir');
const outDir = outDirFlag > 0 ? process.argv[outDirFlag + 1] : 'dist';
const tsc = require.resolve('typescript/bin/tsc');
const env = { ...process.env, APP_PROFILE: process.env.APP_PROFILE ?? 'development' };
let service = null;
let stopping = false;

function startService() {
  service = spawn(process.execPath, ['--enable-source-maps', join(outDir, 'src/main.js')], { env, stdio: 'inherit' });
  service.on('exit', () => (service = null));
}

/** Stops the running service and waits for it: the embedded database allows one process at a time. */
function stopService() {
  if (!service) return Promise.resolve();
  const exited = new Promise((resolve) => service.once('exit', resolve));
  service.kill('SIGTERM');
  return exited;
}

const compiler = spawn(
  process.execPath,
  [
    tsc,
    ...['-p', 'tsconfig.build.json', '--outDir', outDir, '--tsBuildInfoFile', join(outDir, '.tsbuildinfo.build')],
    ...['--watch', '--preserveWatchOutput'],
  ],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
compiler.stdout.setEncoding('utf8');
let restarting = Promise.resolve();
compiler.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  // tsc --watch ends every build with "Found N errors. Watching for file changes."
  const built = /Found (\d+) errors?\. Watching for file changes/.exec(chunk);
  if (!built || stopping) return;
  if (built[1] !== '0') {
    console.log('[dev] build failed: the previous version keeps running');
    return;
  }
  restarting = restarting.then(async () => {
    if (service) console.log('[dev] rebuilt: restarting');
    await stopService();
    if (!stopping) startService();
  });
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    stopping = true;
    compiler.kill('SIGTERM');
    await stopService();
    process.exit(0);
  });
}
