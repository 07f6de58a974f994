import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The size budget, as CI enforces it: the script's own verdict and its printed numbers. */
describe('bundle size', () => {
  it('keeps the core at most 10 KB gzipped, with the WebAuthn library in a lazily loaded chunk', () => {
    const output = execFileSync(process.execPath, [join(__dirname, '../scripts/size.mjs')], { encoding: 'utf8' });
    process.stdout.write(output);
    const core = output.split('\n').filter((line) => line.startsWith('core '));
    const lazy = output.split('\n').filter((line) => line.startsWith('lazy '));
    expect(core.length).toBeGreaterThan(0);
    expect(core.some((line) => line.includes('(WebAuthn)'))).toBe(false);
    expect(lazy.some((line) => line.includes('(WebAuthn)'))).toBe(true);
    const total = Number(/core total: (\d+) B gzip/.exec(output)?.[1]);
    expect(total).toBeGreaterThan(2000); // the measurement saw the client, not an empty bundle
    expect(total).toBeLessThanOrEqual(10 * 1024);
  });
});
