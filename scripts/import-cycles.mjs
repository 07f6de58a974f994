#!/usr/bin/env node
// Finds import cycles among the TypeScript files under the given folders (default: src). Every
// static import and re-export counts, `import type` and `import('…')` types included: a circle of
// types is still a circle of knowledge. Dynamic `import()` calls do not count (they load on demand).
// As a script it prints one line per cycle and exits 1; eslint.config.mjs reports the same as a rule.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function typescriptFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return typescriptFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function resolveImport(from, specifier) {
  if (!specifier.startsWith('.')) return null;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts'), base.replace(/\.js$/, '.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** The relative imports of one file: `{ specifier, target, line }` for each resolvable one. */
export function importsOf(file, text = readFileSync(file, 'utf8')) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const add = (node, literal) => {
    const target = resolveImport(file, literal.text);
    if (target) found.push({ specifier: literal.text, target, node });
  };
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node, node.moduleSpecifier);
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      add(node, node.moduleReference.expression);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node, node.argument.literal);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.map(({ specifier, target, node }) => ({
    specifier,
    target,
    line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
  }));
}

/**
 * The import graph of the folders and its cycles: each strongly connected component of more than
 * one file (or a file importing itself), with one shortest circle through it for the message.
 */
export function importCycles(folders = ['src'], base = root) {
  const files = folders.flatMap((folder) => typescriptFiles(resolve(base, folder)));
  const graph = new Map(files.map((file) => [file, [...new Set(importsOf(file).map((i) => i.target))]]));

  // Tarjan's strongly connected components, iteratively (no recursion limit on deep chains).
  let index = 0;
  const indices = new Map();
  const lowlinks = new Map();
  const onStack = new Set();
  const stack = [];
  const components = [];
  for (const start of graph.keys()) {
    if (indices.has(start)) continue;
    const work = [{ node: start, next: 0 }];
    indices.set(start, index);
    lowlinks.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.next < edges.length) {
        const to = edges[frame.next++];
        if (!graph.has(to)) continue;
        if (!indices.has(to)) {
          indices.set(to, index);
          lowlinks.set(to, index++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, next: 0 });
        } else if (onStack.has(to)) {
          lowlinks.set(frame.node, Math.min(lowlinks.get(frame.node), indices.get(to)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        lowlinks.set(parent, Math.min(lowlinks.get(parent), lowlinks.get(frame.node)));
      }
      if (lowlinks.get(frame.node) === indices.get(frame.node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfLoop = component.length === 1 && (graph.get(member) ?? []).includes(member);
        if (component.length > 1 || selfLoop) components.push(component.sort());
      }
    }
  }

  /** The shortest way back to `from` inside its component (breadth first). */
  const circleThrough = (from, members) => {
    const previous = new Map();
    const queue = [from];
    while (queue.length > 0) {
      const node = queue.shift();
      for (const to of graph.get(node) ?? []) {
        if (!members.has(to)) continue;
        if (to === from) {
          const path = [node];
          while (path[0] !== from) path.unshift(previous.get(path[0]));
          return [...path, from];
        }
        if (!previous.has(to)) {
          previous.set(to, node);
          queue.push(to);
        }
      }
    }
    return [from, from];
  };

  const componentOf = new Map();
  const cycles = components.map((members) => {
    const set = new Set(members);
    const cycle = { files: members, circle: circleThrough(members[0], set), circleFrom: (file) => circleThrough(file, set) };
    for (const file of members) componentOf.set(file, cycle);
    return cycle;
  });
  return { graph, cycles, componentOf };
}

export const display = (file, base = root) => relative(base, file).split('\\').join('/');

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const folders = process.argv.slice(2);
  const { cycles } = importCycles(folders.length > 0 ? folders : ['src']);
  for (const cycle of cycles) console.error(`import cycle: ${cycle.circle.map((f) => display(f)).join(' → ')}`);
  process.exit(cycles.length > 0 ? 1 : 0);
}
