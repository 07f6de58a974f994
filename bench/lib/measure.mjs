// One measured autocannon run: throughput, latency, errors, and where the CPU went.
import autocannon from 'autocannon';
import bcrypt from 'bcrypt';
import { createHash } from 'node:crypto';
import { cpuBetween, cpuByPid, machineCpu, processCpuSeconds, sampleRss } from './proc.mjs';

export function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (!sorted.length) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Starts counting CPU: the server's, its database backends' (`databasePids()`: empty with the
 * embedded database, whose work is the server's), helper processes' (`helperPids`: a provider in
 * its own process), this load generator's and the machine's; `stop()` returns what each used.
 */
async function cpuWindow({ server, databasePids, helperPids = [] }) {
  const pids0 = await databasePids();
  const db0 = cpuByPid(pids0);
  const helpers0 = cpuByPid(helperPids);
  const server0 = processCpuSeconds(server.pid);
  const self0 = process.cpuUsage();
  const machine0 = machineCpu();
  const rss = sampleRss(server.pid);
  return {
    async stop() {
      const rssMax = rss.stop();
      const machine1 = machineCpu();
      const self = process.cpuUsage(self0);
      const server1 = processCpuSeconds(server.pid);
      const pids1 = await databasePids();
      const db1 = cpuByPid(new Set([...pids0, ...pids1]));
      return {
        server: server1 - server0,
        database: cpuBetween(db0, db1),
        helpers: cpuBetween(helpers0, cpuByPid(helperPids)),
        loadgen: (self.user + self.system) / 1e6,
        busy: machine1.busy - machine0.busy,
        idle: machine1.idle - machine0.idle,
        rssMax,
      };
    },
  };
}

/** The per-request figures of a run of `seconds` with `ok` successes. */
function perRequest(cpu, ok, seconds) {
  const per = (cpuSeconds) => (cpuSeconds * 1000) / Math.max(1, ok);
  return {
    reqPerSec: ok / seconds,
    serverCpuMsPerReq: per(cpu.server),
    databaseCpuMsPerReq: per(cpu.database),
    loadgenCpuMsPerReq: per(cpu.loadgen),
    helperCpuMsPerReq: per(cpu.helpers),
    // CPU the machine spent on anything but the server, its database, the helpers and the load generator.
    otherCpu: (cpu.busy - cpu.server - cpu.database - cpu.helpers - cpu.loadgen) / seconds,
    idleCpu: cpu.idle / seconds,
    rssMaxBytes: cpu.rssMax,
  };
}

/**
 * Runs `scenario` once for `duration` seconds. `databasePids()` lists the PostgreSQL backends
 * serving the benchmark database (empty with the embedded database, whose work is the server's).
 */
export async function runOnce({ origin, scenario, connections, duration, server, databasePids }) {
  await scenario.beforeRun?.();
  const window = await cpuWindow({ server, databasePids });
  const instance = autocannon({
    url: origin,
    connections,
    pipelining: 1,
    duration,
    timeout: 30,
    requests: scenario.requests,
  });
  scenario.onStart?.(instance);
  const result = await instance;
  const cpu = await window.stop();
  return {
    seconds: result.duration,
    total: result.requests.total,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    ...perRequest(cpu, result['2xx'], result.duration),
    stoppedEarly: scenario.stoppedEarly?.() ?? false,
  };
}

function percentile(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

/**
 * A scenario whose unit is a sequence of requests with work between them (`scenario.flow`, one
 * whole federated sign-in): `connections` loops run it back to back for `duration` seconds. The
 * same figures as `runOnce`, per flow; the CPU of `scenario.otherPids()` (a provider in its own
 * process) is counted apart, neither the server's nor "other".
 */
export async function runFlowOnce({ scenario, connections, duration, server, databasePids }) {
  await scenario.beforeRun?.();
  const window = await cpuWindow({ server, databasePids, helperPids: scenario.otherPids?.() ?? [] });
  const latencies = [];
  let failures = 0;
  const start = performance.now();
  const end = start + duration * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const began = performance.now();
        try {
          await scenario.flow();
          latencies.push(performance.now() - began);
        } catch (error) {
          failures += 1;
          scenario.lastError = error;
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const cpu = await window.stop();
  const sorted = latencies.sort((a, b) => a - b);
  return {
    seconds,
    total: latencies.length + failures,
    ok: latencies.length,
    non2xx: failures,
    errors: 0,
    p50: Math.round(percentile(sorted, 50)),
    p90: Math.round(percentile(sorted, 90)),
    p99: Math.round(percentile(sorted, 99)),
    max: Math.round(sorted.at(-1) ?? NaN),
    ...perRequest(cpu, latencies.length, seconds),
    stoppedEarly: false,
  };
}

/**
 * Warm-up, then at least `runs` runs; with `cleanRuns` more runs (up to `maxRuns`) until that many
 * ran while other processes used less than `cleanOther` CPUs. Medians over the clean runs.
 */
export async function measureScenario(opts) {
  const { scenario, warmup, runs, cleanRuns, maxRuns, cleanOther, log } = opts;
  const once = scenario.flow ? runFlowOnce : runOnce;
  if (warmup > 0) await once({ ...opts, duration: warmup });
  const all = [];
  const clean = (r) => r.otherCpu < cleanOther;
  while (all.length < runs || (cleanRuns && all.filter(clean).length < cleanRuns && all.length < maxRuns)) {
    const r = await once(opts);
    r.clean = clean(r);
    all.push(r);
    log(
      `  run ${all.length}: ${r.reqPerSec.toFixed(1)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}, ` +
        `server ${r.serverCpuMsPerReq.toFixed(2)} + db ${r.databaseCpuMsPerReq.toFixed(2)} + loadgen ${r.loadgenCpuMsPerReq.toFixed(2)} CPU ms/req, ` +
        `other ${r.otherCpu.toFixed(2)} CPU, RSS ${(r.rssMaxBytes / 2 ** 20).toFixed(0)} MB${r.clean ? '' : ' (not clean)'}${r.stoppedEarly ? ' (token pool ran out)' : ''}`,
    );
    if (r.stoppedEarly) break;
  }
  const used = cleanRuns && all.some(clean) ? all.filter(clean) : all;
  const med = (f) => median(used.map(f));
  return {
    name: scenario.name,
    what: scenario.what,
    connections: opts.connections,
    runsUsed: used.length,
    runsTotal: all.length,
    reqPerSec: med((r) => r.reqPerSec),
    reqPerSecMin: Math.min(...all.map((r) => r.reqPerSec)),
    reqPerSecMax: Math.max(...all.map((r) => r.reqPerSec)),
    p50: med((r) => r.p50),
    p99: med((r) => r.p99),
    errors: all.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
    serverCpuMsPerReq: med((r) => r.serverCpuMsPerReq),
    databaseCpuMsPerReq: med((r) => r.databaseCpuMsPerReq),
    loadgenCpuMsPerReq: med((r) => r.loadgenCpuMsPerReq),
    helperCpuMsPerReq: med((r) => r.helperCpuMsPerReq),
    otherCpu: med((r) => r.otherCpu),
    rssMaxBytes: Math.max(...all.map((r) => r.rssMaxBytes)),
    runs: all,
  };
}

/** The service's password scheme (src/adapters/crypto/bcrypt-password-hasher.ts): bcrypt over base64(SHA-256(NFKC)). */
export function preHash(password) {
  return createHash('sha256').update(password.normalize('NFKC'), 'utf8').digest('base64');
}

/**
 * The bcrypt-only limit: `concurrency` loops of bcrypt.compare (async, on the libuv pool, as the
 * service runs it) for `duration` seconds, in this process while the server idles.
 */
export async function bcryptLimitOnce({ hash, password, concurrency, duration }) {
  const input = preHash(password);
  const machine0 = machineCpu();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + duration * 1000;
  let done = 0;
  let last = start;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        if (!(await bcrypt.compare(input, hash))) throw new Error('bcrypt limit: the hash does not match the password');
        done += 1;
        last = performance.now();
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  const machine1 = machineCpu();
  const seconds = (last - start) / 1000;
  const ownCpu = (cpu.user + cpu.system) / 1e6;
  return {
    perSec: done / seconds,
    cpuMsPerCompare: (ownCpu * 1000) / done,
    otherCpu: (machine1.busy - machine0.busy - ownCpu) / seconds,
  };
}

export async function bcryptLimit({ hash, password, concurrency, duration, runs, cleanRuns, maxRuns, cleanOther, log }) {
  await bcrypt.compare(preHash(password), hash); // warm-up
  const all = [];
  const clean = (r) => r.otherCpu < cleanOther;
  while (all.length < runs || (cleanRuns && all.filter(clean).length < cleanRuns && all.length < maxRuns)) {
    const r = await bcryptLimitOnce({ hash, password, concurrency, duration });
    r.clean = clean(r);
    all.push(r);
    log(
      `  run ${all.length}: ${r.perSec.toFixed(2)} compares/s, ${r.cpuMsPerCompare.toFixed(1)} CPU ms each, other ${r.otherCpu.toFixed(2)} CPU${r.clean ? '' : ' (not clean)'}`,
    );
  }
  const used = cleanRuns && all.some(clean) ? all.filter(clean) : all;
  return {
    perSec: median(used.map((r) => r.perSec)),
    perSecMin: Math.min(...all.map((r) => r.perSec)),
    perSecMax: Math.max(...all.map((r) => r.perSec)),
    cpuMsPerCompare: median(used.map((r) => r.cpuMsPerCompare)),
    runsUsed: used.length,
    runsTotal: all.length,
    runs: all,
  };
}
