import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

const ROOT = join(__dirname, '../..');

/** Builds the account console (as `npm run build` does) into a fresh folder and returns it. */
export function buildConsole(): string {
  const outdir = mkdtempSync(join(tmpdir(), 'console-dist-'));
  execFileSync(process.execPath, [join(ROOT, 'console/build.mjs')], { env: { ...process.env, CONSOLE_OUTDIR: outdir } });
  return outdir;
}

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: { target: string[] }[] };
let axeSource: string | undefined;

/** axe-core's violations in the page (evaluated over the DevTools protocol: the page's CSP refuses inline scripts, rightly). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(axeSource);
  return page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) =>
    ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`);
}
