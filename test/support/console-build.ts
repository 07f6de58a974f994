import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

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

/**
 * Everything the pages of `context` do wrong, collected as they go: uncaught errors, CSP violations
 * (the securitypolicyviolation event, reported through a binding) and console errors other than
 * the "Failed to load resource" lines of API answers a page expects (401 on a refresh without a
 * session, 400 on a wrong code).
 */
export async function watchProblems(context: BrowserContext): Promise<string[]> {
  const problems: string[] = [];
  await context.exposeBinding('reportViolation', (_source, text: string) => problems.push(`CSP violation: ${text}`));
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) =>
      window.reportViolation(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));`,
  });
  context.on('page', (page) => {
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) return;
      problems.push(`console error: ${message.text()}`);
    });
  });
  return problems;
}
