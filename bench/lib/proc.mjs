// What the benchmark reads from /proc: CPU seconds of a process, of the whole machine, and RSS.
import fs from 'node:fs';
import os from 'node:os';
import { execFileSync } from 'node:child_process';

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
} catch {
  // 100 is the value on every Linux kernel we run on.
}

/** user + system CPU seconds a process has used so far, or null when it is gone. */
export function processCpuSeconds(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces: the fields we want follow the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return null;
  }
}

/** CPU seconds of several processes, keyed by pid (those that are gone are left out). */
export function cpuByPid(pids) {
  const out = new Map();
  for (const pid of pids) {
    const seconds = processCpuSeconds(pid);
    if (seconds !== null) out.set(String(pid), seconds);
  }
  return out;
}

/** CPU used between two cpuByPid snapshots by the processes alive at the end (new ones count whole). */
export function cpuBetween(before, after) {
  let total = 0;
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0);
  return total;
}

/** Machine-wide busy and idle CPU seconds from /proc/stat. */
export function machineCpu() {
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return {
    busy: (user + nice + system + irq + softirq) / ticksPerSecond,
    idle: (idle + iowait) / ticksPerSecond,
    steal: steal / ticksPerSecond,
  };
}

/** Resident set size of a process in bytes, or null. */
export function rssBytes(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Samples a process's RSS until stopped; `stop()` returns the maximum seen. */
export function sampleRss(pid, everyMs = 100) {
  let max = rssBytes(pid) ?? 0;
  const timer = setInterval(() => {
    const rss = rssBytes(pid);
    if (rss !== null && rss > max) max = rss;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const rss = rssBytes(pid);
      if (rss !== null && rss > max) max = rss;
      return max;
    },
  };
}

export function machineDescription() {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown';
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (match) cpuModel = match[1].trim();
  } catch {
    // keep os.cpus()'s answer
  }
  return {
    cpuModel,
    cpus: os.availableParallelism?.() ?? os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: os.release(),
    node: process.version,
    uvThreadpoolSize: process.env.UV_THREADPOOL_SIZE ?? '4 (default)',
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}
