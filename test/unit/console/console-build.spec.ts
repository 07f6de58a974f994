import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildConsole } from '../../support/console-build';

/** Every script of the console, the SDK and the lazily loaded WebAuthn chunk included, gzipped. */
const BUDGET = 60 * 1024;

describe('the built account console', () => {
  let dir: string;
  let scripts: { name: string; text: string; gzip: number }[];
  let page: string;

  beforeAll(() => {
    dir = buildConsole();
    page = readFileSync(join(dir, 'index.html'), 'utf8');
    scripts = readdirSync(join(dir, 'assets'))
      .filter((name) => name.endsWith('.js'))
      .map((name) => {
        const body = readFileSync(join(dir, 'assets', name));
        return { name, text: body.toString('utf8'), gzip: gzipSync(body, { level: 9 }).length };
      });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`keeps all its JavaScript, SDK included, within ${BUDGET / 1024} KB gzipped`, () => {
    const total = scripts.reduce((sum, s) => sum + s.gzip, 0);
    console.log(`console JavaScript: ${scripts.map((s) => `${s.name} ${s.gzip} B`).join(', ')}; total ${total} B gzip`);
    expect(total).toBeGreaterThan(5 * 1024); // the client and the views are in there
    expect(total).toBeLessThanOrEqual(BUDGET);
  });

  it('loads one module from the page; the WebAuthn library is a chunk of its own, fetched only for a ceremony', () => {
    const entries = [...page.matchAll(/<script type="module" src="\/account\/assets\/([^"]+)"><\/script>/g)].map((m) => m[1]);
    expect(entries).toHaveLength(1);
    const entry = scripts.find((s) => s.name === entries[0])!;
    expect(entry.text).toContain('X-Refresh-Token-Transport');
    const webauthn = scripts.filter((s) => s.text.includes('WebAuthn is not supported in this browser'));
    expect(webauthn.map((s) => s.name)).not.toContain(entry.name);
    expect(webauthn).toHaveLength(1);
    // Reached only through a dynamic import.
    expect(entry.text).toContain(`import("./${webauthn[0].name}")`);
    expect(entry.text).not.toMatch(new RegExp(`from\\s*"\\./${webauthn[0].name}"`));
  });

  it('writes no inline script or style into the page, and names hashed assets', () => {
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).not.toMatch(/<style|\sstyle=/);
    expect(page).toMatch(/href="\/account\/assets\/style-[A-Z0-9]{8}\.css"/);
    expect(entryNames(page)).toEqual([expect.stringMatching(/^console-[A-Z0-9]{8}\.js$/)]);
  });
});

const entryNames = (page: string) => [...page.matchAll(/src="\/account\/assets\/([^"]+)"/g)].map((m) => m[1]);
