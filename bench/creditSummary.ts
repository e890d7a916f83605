/**
 * Authenticated GET /api/credits/summary at 50 concurrent connections (autocannon), beside a baseline of the
 * same summary SQL run straight on pg at the same concurrency for the same time, in one run.
 *
 * Database: DATABASE_URL when set, else an embedded PostgreSQL in .data/bench-postgres; migrated to latest.
 * The API runs in its own process (bench/support/appServer.ts) so the load generator does not share its event loop.
 * Env: BENCH_CONNECTIONS (50), BENCH_DURATION_SECONDS (10).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Pool } from 'pg';
import { connectDatabase } from '../db/connection';
import { signUp } from '../services/accounts';
import { creditSummaryQuery } from '../services/credits';

const ROOT = path.resolve(__dirname, '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION_S = Number(process.env.BENCH_DURATION_SECONDS ?? 10);

// plain CommonJS modules without type declarations: the parts used here, typed
interface EmbeddedPostgres {
  url: string;
  ensureDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}
interface ServicesModule {
  freePort(): Promise<number>;
  startEmbeddedPostgres(opts: { dataDir: string; port: number }): Promise<EmbeddedPostgres>;
}
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  latency: { p50: number; p99: number; average: number; totalCount: number };
  requests: { average: number; total: number };
}
type Autocannon = (opts: { url: string; connections: number; duration: number; headers: Record<string, string> }) => Promise<AutocannonResult>;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../scripts/lib/services') as ServicesModule;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as Autocannon;

interface Figures {
  label: string;
  requests: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
}

async function resolveDatabase(): Promise<{ url: string; stop: (() => Promise<void>) | null }> {
  if (process.env.DATABASE_URL) return { url: process.env.DATABASE_URL, stop: null };
  const pg = await services.startEmbeddedPostgres({ dataDir: path.join(ROOT, '.data', 'bench-postgres'), port: await services.freePort() });
  await pg.ensureDatabase('render_studio_bench');
  return { url: `${pg.url}/render_studio_bench`, stop: pg.stop };
}

function migrate(databaseUrl: string): void {
  const r = spawnSync(TSX, ['db/migrate.ts', 'latest'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('migrations failed');
}

async function startApi(databaseUrl: string): Promise<{ baseUrl: string; child: ChildProcess }> {
  const child = spawn(TSX, [path.join(__dirname, 'support', 'appServer.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('API did not start within 60 s')), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`API exited with ${code} before listening`));
    });
  });
  return { baseUrl: `http://127.0.0.1:${port}`, child };
}

function stopApi(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

async function benchHttp(baseUrl: string, token: string): Promise<Figures> {
  const url = `${baseUrl}/api/credits/summary`;
  const headers = { authorization: `Bearer ${token}` };
  // warm-up, and a check that the endpoint really answers the summary (a 401 would make the figures meaningless)
  const probe = await fetch(url, { headers });
  const body = (await probe.json()) as { success?: boolean; data?: { credits?: number } };
  if (probe.status !== 200 || body.success !== true || typeof body.data?.credits !== 'number') {
    throw new Error(`GET /api/credits/summary answered ${probe.status} ${JSON.stringify(body)}`);
  }
  await autocannon({ url, connections: CONNECTIONS, duration: 1, headers });

  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, headers });
  return {
    label: 'HTTP GET /api/credits/summary',
    requests: r['2xx'],
    seconds: r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    failures: r.non2xx + r.errors + r.timeouts,
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function benchPg(databaseUrl: string, sql: string, bindings: readonly unknown[]): Promise<Figures> {
  const pool = new Pool({ connectionString: databaseUrl, max: CONNECTIONS });
  try {
    // open every connection first, as autocannon does before it measures
    await Promise.all(Array.from({ length: CONNECTIONS }, () => pool.query(sql, [...bindings])));
    const latencies: number[] = [];
    let failures = 0;
    const started = process.hrtime.bigint();
    const deadline = started + BigInt(DURATION_S) * 1_000_000_000n;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (process.hrtime.bigint() < deadline) {
          const t0 = process.hrtime.bigint();
          try {
            const { rowCount } = await pool.query(sql, [...bindings]);
            if (rowCount !== 1) failures += 1;
            else latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          } catch {
            failures += 1;
          }
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const sorted = Float64Array.from(latencies).sort();
    return { label: 'pg direct, same summary query', requests: latencies.length, seconds, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), failures };
  } finally {
    await pool.end();
  }
}

function report(rows: Figures[]): void {
  const fmt = (n: number, digits: number) => n.toFixed(digits).padStart(12);
  process.stdout.write(`\ncredit summary: ${CONNECTIONS} concurrent, ${DURATION_S} s each\n`);
  process.stdout.write(`${'target'.padEnd(34)}${'requests/s'.padStart(12)}${'p50 ms'.padStart(12)}${'p99 ms'.padStart(12)}${'requests'.padStart(12)}${'failed'.padStart(12)}\n`);
  for (const r of rows) {
    process.stdout.write(`${r.label.padEnd(34)}${fmt(r.requests / r.seconds, 0)}${fmt(r.p50Ms, 2)}${fmt(r.p99Ms, 2)}${fmt(r.requests, 0)}${fmt(r.failures, 0)}\n`);
  }
  const [http, pg] = rows;
  process.stdout.write(
    `HTTP serves ${((100 * http.requests) / http.seconds / (pg.requests / pg.seconds)).toFixed(1)}% of the direct pg rate ` +
      '(each HTTP request also looks up its session: two queries against one).\n',
  );
}

async function main(): Promise<void> {
  const db = await resolveDatabase();
  let api: ChildProcess | null = null;
  const knex = connectDatabase(db.url, { min: 0, max: 2 });
  let userId: string | null = null;
  try {
    migrate(db.url);
    const { user, session } = await signUp(
      knex,
      { name: 'Bench User', email: `bench-${randomUUID()}@example.test`, password: `bench-${randomUUID()}-1` },
      { sessionTtlDays: 1 },
    );
    userId = user.id;
    const started = await startApi(db.url);
    api = started.child;

    const http = await benchHttp(started.baseUrl, session.token);
    await stopApi(api);
    api = null;
    const { sql, bindings } = creditSummaryQuery(knex, user.id).toSQL().toNative();
    const pg = await benchPg(db.url, sql, bindings);

    report([http, pg]);
    if (http.failures || pg.failures) throw new Error(`failed requests: HTTP ${http.failures}, pg ${pg.failures}`);
  } finally {
    if (api) await stopApi(api);
    if (userId) await knex('users').where({ id: userId }).delete();
    await knex.destroy();
    if (db.stop) await db.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
