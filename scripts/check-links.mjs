#!/usr/bin/env node
// Checks the links of README.md and docs/**/*.md: every relative link must name a file of the
// repository and, with #anchor, a heading of that file (GitHub's anchors); no link may leave the
// repository, and no document may point at one that is not in it. Exits 1 with one line per problem.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function markdownFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const FENCED = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm;

/** Text outside fenced code blocks and inline code (blanked, so line numbers stay), where links live. */
function prose(text) {
  return text.replace(FENCED, (block) => block.replace(/[^\n]/g, '')).replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchors of a document's headings: lower case, punctuation dropped, spaces to hyphens, -1 … for repeats. */
function headingAnchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const m of text.replace(FENCED, '').matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = m[1]
      .replace(/`/g, '')
      .replace(/<[^>]+>/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count ? `${base}-${count}` : base);
  }
  return out;
}

const files = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))].filter((f) => existsSync(f));
const problems = [];
const anchorCache = new Map();
const anchorsOf = (file) => {
  if (!anchorCache.has(file)) anchorCache.set(file, headingAnchors(readFileSync(file, 'utf8')));
  return anchorCache.get(file);
};

for (const file of files) {
  const text = readFileSync(file, 'utf8');
  const name = relative(root, file);
  const lineOf = (index) => text.slice(0, index).split('\n').length;
  const body = prose(text);
  // Documents that are not part of this repository must not be referred to at all.
  for (const m of text.matchAll(/\bAPI\.md\b|\.\.\/shared\/|\bSTACK-NOTES\b/g)) {
    problems.push(`${name}:${lineOf(m.index)}: refers to "${m[0]}", a document outside the repository`);
  }
  for (const m of body.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\[[^\]]+\]:\s*(\S+)/gm)) {
    const target = m[1] ?? m[2];
    const where = `${name}:${body.slice(0, m.index).split('\n').length}`;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
    const [pathPart, anchor] = target.split('#', 2);
    const destination = pathPart ? resolve(dirname(file), decodeURIComponent(pathPart)) : file;
    if (destination !== root && !destination.startsWith(root + sep)) {
      problems.push(`${where}: ${target} leaves the repository`);
      continue;
    }
    if (!existsSync(destination)) {
      problems.push(`${where}: ${target} does not exist`);
      continue;
    }
    if (anchor !== undefined) {
      if (statSync(destination).isDirectory() || !destination.endsWith('.md')) {
        problems.push(`${where}: ${target} has an anchor but is not a Markdown file`);
      } else if (!anchorsOf(destination).has(anchor)) {
        problems.push(`${where}: ${target}: no heading "#${anchor}" in ${relative(root, destination)}`);
      }
    }
  }
}

if (problems.length) {
  console.error(`Broken documentation links (${problems.length}):\n${problems.join('\n')}`);
  process.exit(1);
}
console.log(`Links checked: ${files.length} documents, every relative link and anchor resolves.`);
