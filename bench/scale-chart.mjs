#!/usr/bin/env node
// Draws the scale benchmark's chart: p50 and p99 of each path against the number of users, on
// log-log axes, from the JSON `npm run bench:scale` writes. Vega-Lite compiles the description,
// Vega renders it to SVG without a browser.
//
//   node bench/scale-chart.mjs bench/results/scale-<stamp>/scale.json [more.json …] --out docs/images/scale.svg
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

// PostgreSQL sizes from every file; a PGlite point is drawn as its own series.
const values = [];
for (const file of files) {
  const run = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const size of run.sizes) {
    for (const r of size.results) {
      const path = size.database === 'pglite' ? `${r.name} (PGlite)` : r.name;
      values.push({ path, users: size.users, percentile: 'p50', ms: Math.max(0.5, r.p50) });
      values.push({ path, users: size.users, percentile: 'p99', ms: Math.max(0.5, r.p99) });
    }
  }
}
const kind = (name) => (['login', 'refresh', 'me', 'own-sessions'].includes(name.replace(' (PGlite)', '')) ? 'user paths' : 'admin lists');
for (const v of values) v.group = kind(v.path);

const spec = {
  $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
  title: 'Latency per path against users (4 connections)',
  data: { values },
  facet: { column: { field: 'group', type: 'nominal', title: null }, row: { field: 'percentile', type: 'nominal', title: null } },
  spec: {
    width: 320,
    height: 220,
    layer: [
      {
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'users', type: 'quantitative', scale: { type: 'log' }, title: 'users', axis: { format: '~s' } },
          y: { field: 'ms', type: 'quantitative', scale: { type: 'log' }, title: 'ms' },
          color: { field: 'path', type: 'nominal', legend: { columns: 2 } },
        },
      },
      { mark: { type: 'rule', strokeDash: [4, 4], color: '#999' }, encoding: { y: { datum: 50 } } },
    ],
  },
  resolve: { scale: { color: 'shared' } },
};

const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
fs.writeFileSync(OUT, await view.toSVG());
console.log(`wrote ${OUT} (${values.length / 2} points)`);
