#!/usr/bin/env node
// Summarises a V8 CPU profile (node --cpu-prof, or `npm run bench -- --cpu-prof`): self time by
// function and by package, so a missed target comes with where the time went.
// Usage: node bench/profile-summary.mjs <file.cpuprofile> [--top 30] [--skip <seconds>]
import fs from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/profile-summary.mjs <file.cpuprofile> [--top 30]');
  process.exit(2);
}
const topIndex = process.argv.indexOf('--top');
const TOP = topIndex > -1 ? Number(process.argv[topIndex + 1]) : 30;
// --skip S leaves out the first S seconds (start-up: module loading, migrations, bootstrap).
const skipIndex = process.argv.indexOf('--skip');
const SKIP_MICROS = skipIndex > -1 ? Number(process.argv[skipIndex + 1]) * 1e6 : 0;

const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const selfMicros = new Map();
let elapsed = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  elapsed += profile.timeDeltas[i] ?? 0;
  if (elapsed < SKIP_MICROS) continue;
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
}
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);

function where(frame) {
  const url = frame.url || '';
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm > -1) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const dist = url.indexOf('/dist/');
  return dist > -1
    ? url
        .slice(dist + 6)
        .replace(/^src\//, 'src/')
        .split('/')
        .slice(0, 3)
        .join('/')
    : url;
}

const byFunction = new Map();
const byPackage = new Map();
let idle = 0;
for (const [id, micros] of selfMicros) {
  const frame = nodes.get(id).callFrame;
  if (frame.functionName === '(idle)') {
    idle += micros;
    continue;
  }
  const pkg = where(frame);
  const key = `${frame.functionName || '(anonymous)'}  ${pkg}${frame.url && !frame.url.startsWith('node:') ? `:${frame.lineNumber + 1}` : ''}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + micros);
}
const busy = total - idle;
const pct = (x) => `${((x / busy) * 100).toFixed(1).padStart(5)} %`;
console.log(
  `${file}\nbusy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s sampled (idle ${((idle / total) * 100).toFixed(0)} %); shares below are of busy time\n`,
);
console.log('self time by package / area');
for (const [pkg, micros] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${pct(micros)}  ${pkg}`);
console.log('\nself time by function');
for (const [fn, micros] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${pct(micros)}  ${fn}`);
