import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../../src/config/load-config';

const ROOT = join(__dirname, '..', '..', '..');
const LOADER = join(ROOT, 'src', 'config', 'load-config.ts');
const CONFIGURATION = join(ROOT, 'docs', 'configuration.md');

/** Every variable loadConfig asks for, recorded by an environment that is all empty. */
function variablesRead(): Set<string> {
  const seen = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get(_target, key) {
      if (typeof key === 'string') seen.add(key);
      return undefined;
    },
    has(_target, key) {
      if (typeof key === 'string') seen.add(key);
      return false;
    },
  });
  loadConfig(env);
  return seen;
}

/**
 * Every variable named in the loader's source: `env.NAME`, `env['NAME']` and `helper(env, 'NAME'…)`,
 * so that a variable read only in some configurations counts too.
 */
function variablesNamed(): Set<string> {
  const source = readFileSync(LOADER, 'utf8');
  const names = new Set<string>();
  for (const pattern of [
    /\benv\.([A-Z][A-Z0-9_]*)/g,
    /\benv\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\]/g,
    /\(\s*env\s*,\s*['"]([A-Z][A-Z0-9_]*)['"]/g,
  ]) {
    for (const m of source.matchAll(pattern)) names.add(m[1]);
  }
  return names;
}

/** The first column of the variables table of docs/configuration.md. */
function variablesDocumented(): string[] {
  return readFileSync(CONFIGURATION, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => /^\| `([A-Z][A-Z0-9_]*)`/.exec(line)?.[1] ?? `unreadable row: ${line}`);
}

describe('the configuration table of docs/configuration.md', () => {
  const read = new Set([...variablesRead(), ...variablesNamed()]);
  const documented = variablesDocumented();

  it('is found, and its rows name variables', () => {
    expect(documented.length).toBeGreaterThan(40);
    expect(documented.filter((name) => name.startsWith('unreadable'))).toEqual([]);
  });

  it('has a row for every variable the configuration loader reads', () => {
    expect([...read].filter((name) => !documented.includes(name)).sort()).toEqual([]);
  });

  it('documents no variable the loader does not read', () => {
    expect(documented.filter((name) => !read.has(name))).toEqual([]);
  });

  it('has one row per variable', () => {
    expect(documented.filter((name, i) => documented.indexOf(name) !== i)).toEqual([]);
  });

  it('sees what the loader reads (the recording environment works)', () => {
    expect([...variablesRead()]).toEqual(expect.arrayContaining(['PORT', 'DATABASE_URL', 'RATE_LIMIT_LOGIN', 'TRUST_PROXY']));
  });
});
