// @ts-check
import tseslint from 'typescript-eslint';
import { display, importCycles, importsOf } from './scripts/import-cycles.mjs';

/** Bare package imports and paths that leave a layer, as no-restricted-imports patterns. */
const outside = (...folders) => ({
  regex: `^(\\.\\./)+(${folders.join('|')})(/|$)`,
  message: 'This layer may not import from there (see docs/architecture.md: what may import what).',
});

/** The import graph of src and test, read once per lint run. */
let graph;

/**
 * No import cycles, `import type` included: each import that closes a circle is reported with the
 * circle (scripts/import-cycles.mjs finds them).
 */
const noImportCycle = {
  meta: { type: 'problem', schema: [], docs: { description: 'Disallow import cycles, type-only imports included' } },
  create(context) {
    graph ??= importCycles(['src', 'test']);
    const cycle = graph.componentOf.get(context.filename);
    if (!cycle) return {};
    return {
      Program() {
        for (const { specifier, target, line } of importsOf(context.filename, context.sourceCode.text)) {
          if (!cycle.files.includes(target)) continue;
          const circle = cycle.circleFrom(context.filename).map((file) => display(file));
          context.report({ loc: { line, column: 0 }, message: `'${specifier}' closes an import cycle: ${circle.join(' → ')}` });
        }
      },
    };
  },
};

export default tseslint.config(
  { ignores: ['**/dist/**', 'node_modules/**', 'coverage/**', 'data/**', 'bench/results/**', '**/*.cjs', '*.mjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': ['error', { allow: ['warn', 'error'] }],
    },
  },
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    plugins: { local: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: { 'local/no-import-cycle': 'error' },
  },
  {
    // The domain is pure TypeScript: no framework, no driver, no Node built-ins.
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^[^.]', message: 'The domain imports nothing but the domain.' },
            outside('application', 'adapters', 'config', 'modules'),
          ],
        },
      ],
    },
  },
  {
    // Use cases see the domain, the ports and the plain AppConfig; Nest only for @Injectable.
    files: ['src/application/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: '@nestjs/common', allowImportNames: ['Injectable'], message: 'Application code uses only Injectable from Nest.' },
          ],
          patterns: [
            { regex: '^(?!@nestjs/common$)[^.]', message: 'Application code imports no packages: put I/O behind a port.' },
            outside('adapters', 'modules'),
            { regex: '^(\\.\\./)+config/(?!app-config$)', message: 'Application code may use only the AppConfig class.' },
          ],
        },
      ],
    },
  },
  {
    // Adapters depend inwards; the HTTP adapter reaches the database only through ports.
    files: ['src/adapters/**/*.ts'],
    ignores: ['src/adapters/http/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [outside('http', 'modules')] }] },
  },
  {
    files: ['src/adapters/http/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [outside('persistence', 'mail', 'crypto', 'modules')] }] },
  },
  // src/modules, app.module.ts, main.ts and cli.ts are the composition: they may import every layer,
  // and no layer imports them.
  {
    files: ['src/main.ts', 'src/cli.ts', 'bench/**/*.ts', 'bench/**/*.mjs', 'test/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
