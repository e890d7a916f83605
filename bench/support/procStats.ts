/**
 * Another process's resident memory and CPU time, read from /proc (Linux), sampled while a bench runs.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

/** The server process: appServer.ts runs under tsx, which starts node as a child; the deepest descendant is the server. */
export function serverPid(rootPid: number): number {
  let pid = rootPid;
  for (let depth = 0; depth < 10; depth++) {
    let children: string[] = [];
    try {
      children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    } catch {
      return pid;
    }
    if (children.length === 0) return pid;
    pid = Number(children[children.length - 1]);
  }
  return pid;
}

export function rssKb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]);
}

const CLOCK_TICKS = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(r.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** User + system CPU seconds the process has used so far (utime + stime of /proc/<pid>/stat). */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the command name (field 2) may hold spaces: count fields after its closing parenthesis
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): utime is field 14, stime field 15
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * CPU seconds the whole machine has been busy so far, all cores and processes (user, nice, system, irq, softirq and
 * steal of /proc/stat's first line), or null where /proc/stat is missing.
 */
export function systemCpuSeconds(): number | null {
  let line: string;
  try {
    line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  } catch {
    return null;
  }
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + (steal || 0)) / CLOCK_TICKS;
}

export interface ProcFigures {
  wallSeconds: number;
  cpuSeconds: number;
  /** CPU time over wall time, in % of one core. */
  cpuPercent: number;
  meanRssMb: number;
  peakRssMb: number;
}

/** Samples `pid`'s RSS every `everyMs` between start and stop; CPU is the utime+stime delta over the same window. */
export function sampleProcess(pid: number, everyMs = 200): { stop: () => ProcFigures } {
  const started = process.hrtime.bigint();
  const cpu0 = cpuSeconds(pid);
  const samples: number[] = [rssKb(pid)];
  const timer = setInterval(() => {
    try {
      samples.push(rssKb(pid));
    } catch {
      // the process is gone: the bench fails on its own
    }
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      samples.push(rssKb(pid));
      const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpu = cpuSeconds(pid) - cpu0;
      return {
        wallSeconds,
        cpuSeconds: cpu,
        cpuPercent: (100 * cpu) / wallSeconds,
        meanRssMb: samples.reduce((a, b) => a + b, 0) / samples.length / 1024,
        peakRssMb: Math.max(...samples) / 1024,
      };
    },
  };
}
