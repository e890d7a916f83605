/**
 * Authenticated GET /api/credits/summary at 50 concurrent connections (wrk, support/loadRuns.ts), beside a baseline of the
 * same summary SQL run straight on pg at the same concurrency for the same time, in one run.
 *
 * Database: DATABASE_URL when set, else an embedded PostgreSQL in .data/bench-postgres; migrated to latest.
 * The API runs in its own process (bench/support/appServer.ts) so the load generator does not share its event loop.
 * Env: BENCH_CONNECTIONS (50), BENCH_DURATION_SECONDS (10).
 */
import { creditSummaryQuery } from '../services/billing/credits';
import { startBenchApi, withBenchDatabase, type BenchApi } from './support/benchEnv';
import { httpLoadRun, pgLoadRun, printLoadTable, type LoadFigures, type LoadShape } from './support/loadRuns';
import { figure, ratio, recordResults } from './support/results';

const SHAPE: LoadShape = { connections: Number(process.env.BENCH_CONNECTIONS ?? 50), durationS: Number(process.env.BENCH_DURATION_SECONDS ?? 10) };

async function benchHttp(baseUrl: string, token: string): Promise<LoadFigures> {
  const url = `${baseUrl}/api/credits/summary`;
  const headers = { authorization: `Bearer ${token}` };
  // warm-up, and a check that the endpoint really answers the summary (a 401 would make the figures meaningless)
  const probe = await fetch(url, { headers });
  const body = (await probe.json()) as { success?: boolean; data?: { credits?: number } };
  if (probe.status !== 200 || body.success !== true || typeof body.data?.credits !== 'number') {
    throw new Error(`GET /api/credits/summary answered ${probe.status} ${JSON.stringify(body)}`);
  }
  return httpLoadRun('HTTP GET /api/credits/summary', url, headers, SHAPE);
}

function benchPg(databaseUrl: string, sql: string, bindings: readonly unknown[]): Promise<LoadFigures> {
  return pgLoadRun('pg direct, same summary query', databaseUrl, SHAPE, {
    open: (pool) => pool.query(sql, [...bindings]),
    once: async (pool) => (await pool.query(sql, [...bindings])).rowCount === 1,
  });
}

function report(http: LoadFigures, pg: LoadFigures): void {
  process.stdout.write(`\ncredit summary: ${SHAPE.connections} concurrent, ${SHAPE.durationS} s each\n`);
  printLoadTable([http, pg], 34);
  process.stdout.write(
    `HTTP serves ${((100 * http.requests) / http.seconds / (pg.requests / pg.seconds)).toFixed(1)}% of the direct pg rate ` +
      '(the session and the summary come from per-process caches, services/accounts/sessionCache.ts and services/billing/creditSummaryCache.ts;\n' +
      ' each summary waits for a shared LISTEN-connection barrier, so a pg round trip serves a batch of requests).\n',
  );
  const rate = (f: LoadFigures) => f.requests / f.seconds;
  recordResults('creditSummary', [
    ratio('http_vs_pg', rate(http) / rate(pg), 'higher', 'HTTP req/s over the same SQL on pg at the same concurrency', 0.5),
    figure('http_rps', rate(http), 'req/s', 'higher', 'HTTP GET /api/credits/summary requests per second'),
    figure('http_p99', http.p99Ms, 'ms', 'lower', 'HTTP p99 latency'),
    figure('pg_rps', rate(pg), 'req/s', 'higher', 'pg direct queries per second'),
  ]);
}

async function main(): Promise<void> {
  await withBenchDatabase({ max: 2 }, async (db) => {
    const user = await db.signUpUser('Bench User');
    let api: BenchApi | null = await startBenchApi(db.url);
    try {
      const http = await benchHttp(api.baseUrl, user.token);
      await api.stop();
      api = null;
      const { sql, bindings } = creditSummaryQuery(db.knex, user.userId).toSQL().toNative();
      const pg = await benchPg(db.url, sql, bindings);

      report(http, pg);
      if (http.failures || pg.failures) throw new Error(`failed requests: HTTP ${http.failures}, pg ${pg.failures}`);
    } finally {
      if (api) await api.stop();
    }
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
