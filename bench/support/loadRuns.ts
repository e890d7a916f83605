/**
 * Throughput at a fixed concurrency for a fixed time: HTTP through wrk (autocannon where wrk cannot be installed, or
 * with BENCH_LOAD_TOOL=autocannon), and the same work run straight on pg as the baseline, both as the same figures so
 * one table compares them.
 *
 * Why wrk: the load generator shares the machine's cores with the API it measures. autocannon parses every answer in
 * Node; on the 2-core machine, at 50 connections on the 846 KB listing, it took about as much CPU as the API itself, so
 * the bench measured the two processes' contest for the cores more than the API (618 req/s, p99 176 ms under
 * autocannon against 1297 req/s with wrk on the same server in the same minute). wrk (C, one thread) reads the same
 * answers for about a quarter of that.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Pool } from 'pg';
import { percentile } from './stats';

export interface LoadFigures {
  label: string;
  requests: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
}

export interface LoadShape {
  connections: number;
  durationS: number;
}

// autocannon ships without type declarations: the parts used here, typed
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  latency: { p50: number; p99: number };
}
type Autocannon = (opts: { url: string; connections: number; duration: number; headers: Record<string, string> }) => Promise<AutocannonResult>;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as Autocannon;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools') as { ensureWrk(): string | null };

type LoadTool = { name: 'wrk'; path: string } | { name: 'autocannon' };
let loadTool: LoadTool | undefined;

/** The HTTP load generator of this run (installing wrk when it is missing), named once on the bench's output. */
export function httpLoadTool(): LoadTool {
  if (!loadTool) {
    const wrk = process.env.BENCH_LOAD_TOOL === 'autocannon' ? null : tools.ensureWrk();
    loadTool = wrk ? { name: 'wrk', path: wrk } : { name: 'autocannon' };
    process.stdout.write(`HTTP load generator: ${wrk ? `wrk (${wrk}), one thread` : 'autocannon'}\n`);
  }
  return loadTool;
}

interface WrkReport {
  requests: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50Us: number;
  p99Us: number;
}

const WRK_REPORT_SCRIPT = path.join(__dirname, 'wrkReport.lua');

/** One wrk run: a single thread (the API gets the other core), a 60 s request timeout (autocannon's was 10 s). */
function wrkRun(wrk: string, url: string, headers: Record<string, string>, connections: number, durationS: number): Promise<WrkReport> {
  const args = ['-t1', `-c${connections}`, `-d${durationS}s`, '--timeout', '60s', '-s', WRK_REPORT_SCRIPT];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    const child = spawn(wrk, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      const line = /WRK_REPORT (\{.*\})/.exec(out);
      if (code !== 0 || !line) reject(new Error(`wrk exited with ${code}:\n${out}`));
      else resolve(JSON.parse(line[1]) as WrkReport);
    });
  });
}

/** One second of warm-up, then `durationS` measured; only 2xx answers count as requests. */
export async function httpLoadRun(label: string, url: string, headers: Record<string, string>, shape: LoadShape): Promise<LoadFigures> {
  const tool = httpLoadTool();
  if (tool.name === 'wrk') {
    await wrkRun(tool.path, url, headers, shape.connections, 1);
    const r = await wrkRun(tool.path, url, headers, shape.connections, shape.durationS);
    const failures = r.status + r.connect + r.read + r.write + r.timeout;
    return { label, requests: r.requests - r.status, seconds: r.durationUs / 1e6, p50Ms: r.p50Us / 1000, p99Ms: r.p99Us / 1000, failures };
  }
  await autocannon({ url, connections: shape.connections, duration: 1, headers });
  const r = await autocannon({ url, connections: shape.connections, duration: shape.durationS, headers });
  return { label, requests: r['2xx'], seconds: r.duration, p50Ms: r.latency.p50, p99Ms: r.latency.p99, failures: r.non2xx + r.errors + r.timeouts };
}

export interface PgWork {
  /** Run once on every connection before the clock starts, so all are open (as autocannon does). */
  open: (pool: Pool) => Promise<unknown>;
  /** One request; true when its result is right, false (or a throw) counts as a failure. */
  once: (pool: Pool) => Promise<boolean>;
}

/** `connections` clients, each running `work.once` back to back until `durationS` is up. */
export async function pgLoadRun(label: string, databaseUrl: string, shape: LoadShape, work: PgWork): Promise<LoadFigures> {
  const pool = new Pool({ connectionString: databaseUrl, max: shape.connections });
  try {
    await Promise.all(Array.from({ length: shape.connections }, () => work.open(pool)));
    const latencies: number[] = [];
    let failures = 0;
    const started = process.hrtime.bigint();
    const deadline = started + BigInt(shape.durationS) * 1_000_000_000n;
    await Promise.all(
      Array.from({ length: shape.connections }, async () => {
        while (process.hrtime.bigint() < deadline) {
          const t0 = process.hrtime.bigint();
          try {
            if (await work.once(pool)) latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
            else failures += 1;
          } catch {
            failures += 1;
          }
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const sorted = Float64Array.from(latencies).sort();
    return { label, requests: latencies.length, seconds, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), failures };
  } finally {
    await pool.end();
  }
}

/** The figures as a table, one row each, labels padded to `labelWidth`. */
export function printLoadTable(rows: readonly LoadFigures[], labelWidth: number): void {
  const fmt = (n: number, digits: number) => n.toFixed(digits).padStart(12);
  process.stdout.write(`${'target'.padEnd(labelWidth)}${'requests/s'.padStart(12)}${'p50 ms'.padStart(12)}${'p99 ms'.padStart(12)}${'requests'.padStart(12)}${'failed'.padStart(12)}\n`);
  for (const r of rows) {
    process.stdout.write(`${r.label.padEnd(labelWidth)}${fmt(r.requests / r.seconds, 0)}${fmt(r.p50Ms, 2)}${fmt(r.p99Ms, 2)}${fmt(r.requests, 0)}${fmt(r.failures, 0)}\n`);
  }
}
