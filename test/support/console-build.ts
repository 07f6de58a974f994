import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');

/** Builds the account console (as `npm run build` does) into a fresh folder and returns it. */
export function buildConsole(): string {
  const outdir = mkdtempSync(join(tmpdir(), 'console-dist-'));
  execFileSync(process.execPath, [join(ROOT, 'console/build.mjs')], { env: { ...process.env, CONSOLE_OUTDIR: outdir } });
  return outdir;
}
