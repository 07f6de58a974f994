// npm run cli -- <command>: builds first only when a source is newer than the build, then runs
// the command line of the built service.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const entry = 'dist/src/cli.js';

/** The newest modification time under the given files and folders. */
function newest(paths) {
  let latest = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const stat = statSync(path);
    if (stat.isDirectory()) latest = Math.max(latest, newest(readdirSync(path).map((name) => join(path, name))));
    else latest = Math.max(latest, stat.mtimeMs);
  }
  return latest;
}

// tsc rewrites its build-info file on every build that emitted something; ours marks a build that found nothing to do.
const stamps = ['dist/.tsbuildinfo.build', 'dist/.cli-built'].filter((file) => existsSync(file));
const built = existsSync(entry) ? Math.max(0, ...stamps.map((file) => statSync(file).mtimeMs)) : 0;
if (newest(['src', 'migrations', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']) > built) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const build = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  writeFileSync('dist/.cli-built', new Date().toISOString());
}
const run = spawnSync(process.execPath, [entry, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
