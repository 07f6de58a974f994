#!/usr/bin/env node
// Draws the scale benchmark's chart: p50 and p99 of each path against the number of users, on
// log-log axes, from the JSON `npm run bench:scale` writes. Vega-Lite compiles the description,
// Vega renders it to SVG without a browser.
//
//   node bench/scale-chart.mjs bench/results/scale-<stamp>/scale.json [more.json …] --out docs/images/scale.svg
//   node bench/scale-chart.mjs … --table     (also prints the figures as one Markdown table)
import fs from 'node:fs';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import { option } from './lib/options.mjs';

const OUT = String(option('out', 'docs/images/scale.svg'));
const files = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && all[i - 1] !== '--out');
if (!files.length) {
  console.error('usage: node bench/scale-chart.mjs <scale.json> [more.json …] [--out file.svg]');
  process.exit(2);
}

// Every size of every file; PGlite points keep their path's colour and get their own mark.
const USER_PATHS = ['login', 'refresh', 'me', 'own-sessions'];
const values = [];
for (const file of files) {
  const run = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const size of run.sizes) {
    const database = size.database === 'pglite' ? 'PGlite' : 'PostgreSQL';
    for (const r of size.results) {
      const group = USER_PATHS.includes(r.name) ? 'user paths' : 'admin lists';
      for (const percentile of ['p50', 'p99']) {
        // Log axes: a sub-millisecond median is drawn at 1 ms.
        values.push({ path: r.name, database, group, users: size.users, percentile, ms: Math.max(1, r[percentile]) });
      }
    }
  }
}

const spec = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  title: 'Latency per path against users (4 connections; dashed: 50 ms)',
  data: { values },
  facet: { column: { field: 'group', type: 'nominal', title: null }, row: { field: 'percentile', type: 'nominal', title: null } },
  spec: {
    width: 320,
    height: 220,
    layer: [
      {
        mark: { type: 'line', point: { filled: true, size: 40 } },
        encoding: {
          x: {
            field: 'users',
            type: 'quantitative',
            scale: { type: 'log' },
            title: 'users',
            axis: { values: [1e3, 1e4, 1e5, 1e6], format: '~s' },
          },
          y: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: 'ms', axis: { values: [1, 10, 50, 100, 1000] } },
          color: { field: 'path', type: 'nominal', scale: { scheme: 'tableau20' }, legend: { columns: 1 } },
          shape: { field: 'database', type: 'nominal', title: 'database' },
          detail: { field: 'database', type: 'nominal' },
        },
      },
      { mark: { type: 'rule', strokeDash: [4, 4], color: '#999' }, encoding: { y: { datum: 50 } } },
    ],
  },
  resolve: { scale: { color: 'shared' } },
};

if (option('table', false)) console.log(table(files.flatMap((file) => JSON.parse(fs.readFileSync(file, 'utf8')).sizes)));

/** Paths as rows, sizes as columns: p50 / p99 ms, and server + PostgreSQL CPU ms per request. */
function table(sizes) {
  sizes.sort((a, b) => (a.database === b.database ? a.users - b.users : a.database === 'pglite' ? 1 : -1));
  const names = [...new Set(sizes.flatMap((s) => s.results.map((r) => r.name)))];
  const head = sizes.map((s) => `${s.users.toLocaleString('en')}${s.database === 'pglite' ? ' PGlite' : ''}`);
  const cell = (s, name) => {
    const r = s.results.find((x) => x.name === name);
    if (!r) return '';
    const cpu =
      s.database === 'pglite'
        ? `${r.serverCpuMsPerReq.toFixed(1)}`
        : `${r.serverCpuMsPerReq.toFixed(1)}+${r.databaseCpuMsPerReq.toFixed(1)}`;
    return `${r.p50} / ${r.p99} (${cpu})`;
  };
  return [
    `| path | ${head.join(' | ')} |`,
    `| --- | ${head.map(() => '---:').join(' | ')} |`,
    ...names.map((name) => `| ${name} | ${sizes.map((s) => cell(s, name)).join(' | ')} |`),
  ].join('\n');
}

const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
fs.writeFileSync(OUT, await view.toSVG());
console.log(`wrote ${OUT} (${values.length / 2} points)`);
