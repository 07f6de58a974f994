/**
 * Reads a runnable walk-through out of a Markdown document and compares printed answers with the
 * answers the document shows.
 *
 * The convention, in the document:
 * - the walk-through sits between `<!-- walkthrough -->` and `<!-- /walkthrough -->`;
 * - every ```sh block inside is run, in order, in one bash process (variables carry over);
 * - a ```json block right after a ```sh block is what that block prints: one or more JSON values;
 *   a ```sh block without one must print nothing;
 * - the first ```sh block starts the service (`… npm start …`): its `NAME=value` prefixes are the
 *   environment the service is started with.
 */

export interface WalkthroughStep {
  /** Position among the sh blocks: 0 starts the service, 1, 2 … match the document's numbered steps. */
  index: number;
  script: string;
  /** The JSON values the document shows, or [] when the block must print nothing. */
  expected: unknown[];
  /** The text of the shown answer, for messages. */
  shown: string | null;
}

export interface Walkthrough {
  /** Variables of the start command, e.g. { BOOTSTRAP_ADMIN_EMAIL: 'root@example.com' }. */
  startEnv: Record<string, string>;
  steps: WalkthroughStep[];
}

const FENCE = /^```([a-z]*)\s*\n([\s\S]*?)^```\s*$/gm;

/** The walk-through of a Markdown document (throws when the markers or the start step are missing). */
export function extractWalkthrough(markdown: string): Walkthrough {
  const start = markdown.indexOf('<!-- walkthrough -->');
  const end = markdown.indexOf('<!-- /walkthrough -->');
  if (start < 0 || end < start) throw new Error('no <!-- walkthrough --> … <!-- /walkthrough --> region');
  const region = markdown.slice(start, end);
  const blocks: { lang: string; body: string; from: number; to: number }[] = [];
  for (const m of region.matchAll(FENCE)) {
    blocks.push({ lang: m[1], body: m[2], from: m.index, to: m.index + m[0].length });
  }
  const steps: WalkthroughStep[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i];
    if (block.lang !== 'sh') continue;
    const next = blocks[i + 1];
    const answered = next && next.lang === 'json' && region.slice(block.to, next.from).trim() === '';
    steps.push({
      index: steps.length,
      script: block.body,
      expected: answered ? parseJsonStream(next.body) : [],
      shown: answered ? next.body.trim() : null,
    });
  }
  if (steps.length === 0) throw new Error('the walk-through has no sh block');
  const startLine = steps[0].script.split('\n').find((line) => /\bnpm start\b/.test(line));
  if (!startLine) throw new Error('the first sh block of the walk-through does not start the service');
  const startEnv: Record<string, string> = {};
  const prefix = startLine.slice(0, startLine.search(/\bnpm start\b/));
  for (const m of prefix.matchAll(/([A-Z][A-Z0-9_]*)=('([^']*)'|"([^"]*)"|(\S*))/g)) {
    startEnv[m[1]] = m[3] ?? m[4] ?? m[5] ?? '';
  }
  steps[0].script = steps[0].script
    .split('\n')
    .filter((line) => line !== startLine)
    .join('\n');
  return { startEnv, steps };
}

/** Splits text holding several JSON values (one after another, with or without newlines). */
export function parseJsonStream(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let begin = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    if (c === '{' || c === '[') {
      if (depth === 0) begin = i;
      depth++;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) values.push(JSON.parse(text.slice(begin, i + 1)));
    } else if (depth === 0 && !/\s/.test(c)) {
      throw new Error(`not JSON: ${JSON.stringify(text.slice(i, i + 60))}`);
    }
  }
  if (depth !== 0 || inString) throw new Error(`unfinished JSON: ${JSON.stringify(text.slice(begin, begin + 60))}`);
  return values;
}

/**
 * Keys whose values change on every run: ids, tokens, secrets and times. Their shown value stands
 * for a format, not a value.
 */
export const VOLATILE_KEY = /^(id|token|secret|at|[a-z][A-Za-z]*(Id|Token|At))$/;

/**
 * Values that describe the reader's own machine rather than the service: the device name is
 * derived from the client's User-Agent (curl's major version). They only need the same type.
 */
export const ENVIRONMENT_PATHS = [/\.device\.name$/];

/**
 * Email addresses made fresh on every run (`alice-$RANDOM$RANDOM@example.com`): a shown address
 * stands for any address that differs only in its runs of digits.
 */
const FRESH_ADDRESS_KEY = /^email$/;
const digitsAsFormat = (value: string) => value.replace(/\d+/g, '#');

const FORMATS: { name: string; test: RegExp }[] = [
  { name: 'a UUID', test: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/ },
  { name: 'an ISO 8601 UTC time', test: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/ },
];

function sameFormat(shown: string, actual: string): string | null {
  if (shown.startsWith('eyJ')) return /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(actual) ? null : 'a JWT';
  const format = FORMATS.find((f) => f.test.test(shown));
  if (format) return format.test.test(actual) ? null : format.name;
  // Any other shown value, e.g. "4Rz0c3Vh…": a non-empty string of the same kind of characters.
  const sample = shown.replace(/…$/, '');
  if (/^[A-Za-z0-9_-]+$/.test(sample)) return /^[A-Za-z0-9_-]+$/.test(actual) ? null : 'a base64url string';
  return actual.length > 0 ? null : 'a non-empty string';
}

/**
 * Where `actual` departs from the `shown` answer: same keys both ways, same literal values, except
 * that values of volatile keys only need the same type and format. Returns the differences, one
 * line each (empty when they agree).
 */
export function compareWithShown(shown: unknown, actual: unknown, path = '$', key = ''): string[] {
  const type = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  if (ENVIRONMENT_PATHS.some((p) => p.test(path))) {
    return type(shown) === type(actual) ? [] : [`${path}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
  }
  if (VOLATILE_KEY.test(key) && type(shown) !== 'object' && type(shown) !== 'array') {
    if (type(shown) !== type(actual)) return [`${path}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
    if (typeof shown === 'string') {
      const problem = sameFormat(shown, actual as string);
      return problem ? [`${path}: expected ${problem} (shown ${JSON.stringify(shown)}), got ${JSON.stringify(actual)}`] : [];
    }
    return [];
  }
  if (type(shown) !== type(actual)) return [`${path}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
  if (Array.isArray(shown)) {
    const got = actual as unknown[];
    if (shown.length !== got.length) return [`${path}: shown ${shown.length} items, got ${got.length}: ${JSON.stringify(got)}`];
    return shown.flatMap((item, i) => compareWithShown(item, got[i], `${path}[${i}]`, key));
  }
  if (type(shown) === 'object') {
    const s = shown as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const problems: string[] = [];
    for (const k of Object.keys(s)) {
      if (!(k in a)) problems.push(`${path}.${k}: shown but missing from the answer`);
      else problems.push(...compareWithShown(s[k], a[k], `${path}.${k}`, k));
    }
    for (const k of Object.keys(a)) {
      if (!(k in s)) problems.push(`${path}.${k}: in the answer (${JSON.stringify(a[k])}) but not shown`);
    }
    return problems;
  }
  if (FRESH_ADDRESS_KEY.test(key) && typeof shown === 'string' && /\d/.test(shown)) {
    const same = digitsAsFormat(shown) === digitsAsFormat(actual as string);
    return same ? [] : [`${path}: shown ${JSON.stringify(shown)} (digits may differ), got ${JSON.stringify(actual)}`];
  }
  return shown === actual ? [] : [`${path}: shown ${JSON.stringify(shown)}, got ${JSON.stringify(actual)}`];
}
