/**
 * What the soak reads from the running stack: each process's memory (RSS from /proc, heap from its Prometheus
 * metrics), the workers' Temporal SDK metrics (schedule-to-start latency), PostgreSQL's connections and slow
 * statements, and the machine's CPU use.
 */
import fs from 'node:fs';
import type { Knex } from 'knex';
import { rssKb, systemCpuSeconds } from '../support/procStats';
import { gauge, parsePrometheus, type PromSample } from './report';
import type { SoakProcess, SoakTopology } from './topology';

export interface MemoryReading {
  name: string;
  pid: number;
  rssMb: number | null;
  heapMb: number | null;
  /** what else explains the process's memory (the dev server: how full its history cache is) */
  note?: string;
}

async function scrape(url: string): Promise<PromSample[]> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    return res.ok ? parsePrometheus(await res.text()) : [];
  } catch {
    return [];
  }
}

function rssMbOf(pid: number | null): number | null {
  if (!pid) return null;
  try {
    return rssKb(pid) / 1024;
  } catch {
    return null;
  }
}

/**
 * The live heap (MB) the Go runtime found at its last collection, from the gctrace lines in a log
 * ("gc 12 @3.1s 1%: ... 41->42->20 MB, 43 MB goal, ..."): the third figure is the marked live heap. Null without one.
 */
export function goLiveHeapMb(log: string): number | null {
  const lines = log.match(/^gc \d+ @[\d.]+s .*? (\d+)->(\d+)->(\d+) MB/gm);
  if (!lines) return null;
  const last = /(\d+)->(\d+)->(\d+) MB/.exec(lines[lines.length - 1]);
  return last ? Number(last[3]) : null;
}

/**
 * How full the Temporal dev server's history cache is, from its metrics: the workflows whose state it keeps in memory
 * (`cache_usage` of the mutable state cache) against its bound (`cache_size`). Null when not reported.
 */
export function historyCacheFill(samples: readonly PromSample[]): { entries: number; bound: number } | null {
  const of = (name: string) => samples.find((s) => s.name === name && s.labels.cache_type === 'mutablestate')?.value;
  const entries = of('cache_usage');
  const bound = of('cache_size');
  return entries === undefined || bound === undefined ? null : { entries, bound };
}

/** The last 256 KiB of a file (a log being written), or '' when it cannot be read. */
function tailOf(file: string): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const length = Math.min(size, 256 * 1024);
      const buffer = Buffer.alloc(length);
      fs.readSync(fd, buffer, 0, length, size - length);
      return buffer.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

/**
 * RSS and heap of every API and worker, and the RSS of PostgreSQL's postmaster and the Temporal dev server (its heap:
 * the Go live heap of its last collection).
 */
export async function readMemory(topology: SoakTopology): Promise<MemoryReading[]> {
  const readings: MemoryReading[] = [];
  for (const p of topology.processes()) {
    const heap = gauge(await scrape(p.metricsUrl), 'nodejs_heap_size_used_bytes');
    readings.push({ name: p.name, pid: p.pid, rssMb: rssMbOf(p.pid), heapMb: heap === null ? null : heap / 1024 / 1024 });
  }
  const { postgres, temporal } = topology.servicePids();
  readings.push({ name: 'postgres (postmaster)', pid: postgres ?? 0, rssMb: rssMbOf(postgres), heapMb: null });
  const cache = historyCacheFill(await scrape(topology.temporalServerMetricsUrl));
  readings.push({
    name: 'temporal dev server',
    pid: temporal ?? 0,
    rssMb: rssMbOf(temporal),
    heapMb: goLiveHeapMb(tailOf(topology.temporalLogFile)),
    note: cache ? `history cache ${cache.entries} of ${cache.bound} workflows` : undefined,
  });
  return readings;
}

/** Every worker's Temporal SDK metrics and app metrics, concatenated (histograms are summed across workers). */
export async function scrapeWorkers(processes: readonly SoakProcess[]): Promise<{ temporal: PromSample[]; app: PromSample[] }> {
  const temporal: PromSample[] = [];
  const app: PromSample[] = [];
  for (const p of processes) {
    if (p.kind !== 'worker') continue;
    if (p.temporalMetricsUrl) temporal.push(...(await scrape(p.temporalMetricsUrl)));
    app.push(...(await scrape(p.metricsUrl)));
  }
  return { temporal, app };
}

/** The Temporal SDK's schedule-to-start histograms (workflow and activity tasks), as the exporter names them. */
export function scheduleToStartNames(samples: readonly PromSample[]): string[] {
  return [...new Set(samples.filter((s) => s.name.endsWith('_bucket') && s.name.includes('schedule_to_start')).map((s) => s.name.replace(/_bucket$/, '')))].sort();
}

export interface ConnectionSample {
  at: number;
  total: number;
  active: number;
  idleInTransaction: number;
  byApplication: Record<string, number>;
}

/** pg_stat_activity of the soak's database, grouped the way an operator reads it. */
export async function sampleConnections(knex: Knex): Promise<ConnectionSample> {
  const rows = (await knex.raw("select coalesce(application_name, '') as app, state from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()")).rows as Array<{ app: string; state: string | null }>;
  const byApplication: Record<string, number> = {};
  for (const r of rows) {
    const app = r.app.replace(/\(pid \d+\)/, '').trim() || '(unnamed)';
    byApplication[app] = (byApplication[app] ?? 0) + 1;
  }
  return {
    at: Date.now(),
    total: rows.length,
    active: rows.filter((r) => r.state === 'active').length,
    idleInTransaction: rows.filter((r) => r.state === 'idle in transaction').length,
    byApplication,
  };
}

export interface SlowStatement {
  query: string;
  calls: number;
  meanMs: number;
  maxMs: number;
  totalMs: number;
}

/** The statements with the most total time (pg_stat_statements), or null when the extension is not loaded. */
export async function slowStatements(knex: Knex, limit = 8): Promise<SlowStatement[] | null> {
  try {
    const rows = (
      await knex.raw(
        `select query, calls, mean_exec_time, max_exec_time, total_exec_time from pg_stat_statements
          where dbid = (select oid from pg_database where datname = current_database()) and query not ilike '%pg_stat%'
          order by total_exec_time desc limit ?`,
        [limit],
      )
    ).rows as Array<{ query: string; calls: string; mean_exec_time: number; max_exec_time: number; total_exec_time: number }>;
    return rows.map((r) => ({ query: r.query.replace(/\s+/g, ' ').slice(0, 160), calls: Number(r.calls), meanMs: r.mean_exec_time, maxMs: r.max_exec_time, totalMs: r.total_exec_time }));
  } catch {
    return null;
  }
}

/** Resets pg_stat_statements at the end of warm-up, so the figures are the measured window's. */
export async function resetStatements(knex: Knex): Promise<void> {
  await knex.raw('select pg_stat_statements_reset()').catch(() => undefined);
}

/** Statements the server logged as slower than log_min_duration_statement (the fallback without the extension). */
export function loggedSlowStatements(logFile: string, limit = 8): string[] {
  try {
    return fs
      .readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => /duration: \d/.test(l))
      .slice(-limit)
      .map((l) => l.slice(0, 200));
  } catch {
    return [];
  }
}

const CLOCK_TICKS = 100;

/**
 * CPU seconds used by `rootPid` and every process below it (Linux /proc): each live process's utime + stime, plus
 * cutime + cstime for the children it has reaped (ffmpeg runs of a worker, PostgreSQL backends that ended). Null when
 * the root is gone.
 */
export function treeCpuSeconds(rootPid: number | null): number | null {
  if (!rootPid) return null;
  const parentOf = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[0] is field 3: ppid is field 4, utime 14, stime 15, cutime 16, cstime 17
      parentOf.set(Number(entry), Number(fields[1]));
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]));
    } catch {
      // ended meanwhile
    }
  }
  if (!ticks.has(rootPid)) return null;
  const inTree = (pid: number): boolean => {
    for (let p = pid, depth = 0; p > 1 && depth < 50; p = parentOf.get(p) ?? 0, depth++) if (p === rootPid) return true;
    return false;
  };
  let total = 0;
  for (const [pid, t] of ticks) if (inTree(pid)) total += t;
  return total / CLOCK_TICKS;
}

/** The machine's CPU busy share (0..1 per core summed, so up to the core count) between two readings. */
export class CpuMeter {
  private last = { at: Date.now(), busy: systemCpuSeconds() };

  /** busy cores on average since the previous call (null where /proc/stat is missing) */
  read(): number | null {
    const now = { at: Date.now(), busy: systemCpuSeconds() };
    const before = this.last;
    this.last = now;
    if (now.busy === null || before.busy === null || now.at <= before.at) return null;
    return (now.busy - before.busy) / ((now.at - before.at) / 1000);
  }
}
