/**
 * The shell snippets of a Markdown document: every ```sh, ```bash, ```shell and ```console block.
 *
 * The convention, in the document:
 * - a block runs unless marked: `no-run` in its fence's info string (```sh no-run) or an HTML
 *   comment `<!-- no-run: why -->` on the line before it;
 * - `name=<word>` in the info string names a block, and `after=<word>` runs a block right after
 *   the named one (e.g. a sign-in with a TOTP code shown before the section that sets TOTP up).
 */

export interface DocSnippet {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  body: string;
  /** The answer the document shows right after it (a json or text block), or null. */
  answer: string | null;
  /** Why it does not run, when it is marked so (`''` when marked without a reason). */
  noRun: string | null;
  name: string | null;
  after: string | null;
}

const SHELL = new Set(['sh', 'bash', 'shell', 'console']);
const FENCE = /^```([^\n`]*)\n([\s\S]*?)^```[ \t]*$/gm;

/** The body of a json or text block that follows at once (blank lines between at most). */
function answerAfter(rest: string): string | null {
  if (!/^\s*```(json|text)\b/.test(rest)) return null;
  return /```[a-z]*[^\n]*\n([\s\S]*?)^```/m.exec(rest)?.[1] ?? null;
}

export function extractSnippets(file: string, markdown: string): DocSnippet[] {
  const snippets: DocSnippet[] = [];
  for (const m of markdown.matchAll(FENCE)) {
    const words = m[1].trim().split(/\s+/);
    if (!SHELL.has(words[0])) continue;
    const before = markdown.slice(0, m.index).replace(/\n+$/, '');
    const previousLine = before.slice(before.lastIndexOf('\n') + 1).trim();
    const comment = /^<!--\s*no-run:?\s*(.*?)\s*-->$/.exec(previousLine);
    const attribute = (key: string) => words.find((w) => w.startsWith(`${key}=`))?.slice(key.length + 1) ?? null;
    snippets.push({
      file,
      line: markdown.slice(0, m.index).split('\n').length,
      lang: words[0],
      body: m[2],
      answer: answerAfter(markdown.slice(m.index + m[0].length)),
      noRun: comment ? comment[1] : words.includes('no-run') ? '' : null,
      name: attribute('name'),
      after: attribute('after'),
    });
  }
  return snippets;
}

/** The runnable snippets in the order they run: document order, each `after=X` right after X (and what runs after it). */
export function runOrder(snippets: DocSnippet[]): DocSnippet[] {
  const runnable = snippets.filter((s) => s.noRun === null);
  const names = new Set(runnable.flatMap((s) => (s.name ? [s.name] : [])));
  for (const s of runnable) {
    if (s.after && !names.has(s.after)) throw new Error(`${s.file}:${s.line}: after=${s.after} names no runnable block`);
  }
  const out: DocSnippet[] = [];
  const place = (s: DocSnippet) => {
    out.push(s);
    if (s.name) for (const next of runnable.filter((n) => n.after === s.name)) place(next);
  };
  for (const s of runnable) if (!s.after) place(s);
  return out;
}
