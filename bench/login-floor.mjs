#!/usr/bin/env node
// What any bcrypt login over HTTP can reach on this machine: a bare `node:http` server that parses
// the JSON body, pre-hashes the password, makes 0 or 2 PostgreSQL round trips (a user lookup before
// the compare, a one-row statement after it, as a login's read and write) and answers, against the
// bcrypt-only loop, alternating run by run. No framework, no validation, no session, no token.
//
//   node bench/login-floor.mjs [--runs 3] [--duration 10] [--connections 4] [--bcrypt-cost 10]
//   DATABASE_URL=postgres://… adds the two-round-trip server (its database needs no tables)
import autocannon from 'autocannon';
import bcrypt from 'bcrypt';
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { bcryptLimitOnce, median, preHash } from './lib/measure.mjs';
import { option } from './lib/options.mjs';
import { processCpuSeconds } from './lib/proc.mjs';

const PASSWORD = 'vs-bench-Passw0rd!26';

if (process.argv.includes('--serve')) {
  // The child: one login shape, on an ephemeral port written to stdout.
  const hash = option('hash');
  const pool = process.env.DATABASE_URL ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 8 }) : null;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', async () => {
      const { email, password } = JSON.parse(body);
      if (pool) await pool.query({ name: 'lookup', text: 'SELECT $1::text AS email, $2::text AS hash', values: [email, hash] });
      const ok = await bcrypt.compare(preHash(password), hash);
      if (pool) await pool.query({ name: 'write', text: 'SELECT $1::text AS id', values: [crypto.randomUUID()] });
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }); // a mismatch counts as no login
      res.end(JSON.stringify({ ok }));
    });
  });
  server.listen(0, '127.0.0.1', () => console.log(String(server.address().port)));
} else {
  const runs = Number(option('runs', 3));
  const duration = Number(option('duration', 10));
  const connections = Number(option('connections', 4));
  const cost = Number(option('bcrypt-cost', 10));
  const hash = await bcrypt.hash(preHash(PASSWORD), cost);
  const start = (env) =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', '--hash', hash], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      child.once('error', reject);
      child.stdout.once('data', (port) => resolve({ child, origin: `http://127.0.0.1:${String(port).trim()}` }));
    });
  const servers = { 'http + compare': await start({ ...process.env, DATABASE_URL: '' }) };
  if (process.env.DATABASE_URL) servers['http + 2 PostgreSQL round trips + compare'] = await start(process.env);

  const body = JSON.stringify({ email: 'floor@bench.example.com', password: PASSWORD });
  const drive = async ({ child, origin }) => {
    const cpu0 = processCpuSeconds(child.pid);
    const r = await autocannon({
      url: origin,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      connections,
      duration,
    });
    const ok = r['2xx'];
    return { perSec: ok / duration, cpuMs: ((processCpuSeconds(child.pid) - cpu0) * 1000) / ok };
  };
  const results = { 'bcrypt loop': [] };
  for (const name of Object.keys(servers)) {
    results[name] = [];
    await drive(servers[name]); // warm-up
  }
  for (let run = 1; run <= runs; run++) {
    const loop = await bcryptLimitOnce({ hash, password: PASSWORD, concurrency: connections, duration });
    results['bcrypt loop'].push({ perSec: loop.perSec, cpuMs: loop.cpuMsPerCompare });
    for (const [name, server] of Object.entries(servers)) results[name].push(await drive(server));
    console.error(
      `run ${run}: ${Object.entries(results)
        .map(([n, r]) => `${n} ${r.at(-1).perSec.toFixed(1)}/s`)
        .join(', ')}`,
    );
  }
  for (const { child } of Object.values(servers)) child.kill();

  const limit = median(results['bcrypt loop'].map((r) => r.perSec));
  console.log(`bcrypt cost ${cost}, ${connections} concurrent, ${runs} × ${duration} s, medians:`);
  for (const [name, r] of Object.entries(results)) {
    const perSec = median(r.map((x) => x.perSec));
    console.log(
      `  ${name.padEnd(44)} ${perSec.toFixed(1).padStart(6)}/s  ${median(r.map((x) => x.cpuMs)).toFixed(2)} ms CPU each  ${((perSec / limit) * 100).toFixed(1)} % of the loop`,
    );
  }
}
