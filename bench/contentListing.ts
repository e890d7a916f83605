/**
 * GET /api/projects/:id/content for a project with 1000 items at 50 concurrent connections (autocannon): as clients
 * normally ask (the server reuses a listing for 5 s), the same gzip-compressed, and with ?refresh=1 (every request reads all five tables and
 * signs every link), beside the same five table reads run straight on pg at the same concurrency, in one run.
 * Env: BENCH_CONNECTIONS (50), BENCH_DURATION_SECONDS (10).
 */
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { connectDatabase } from '../db/connection';
import { Clip, CompiledVideo, GeneratedContent, Image, Render } from '../db/models';
import { LIBRARY_PER_TABLE } from '../domain/constants';
import { signUp } from '../services/accounts';
import { benchDatabase, startBenchApi, type BenchApi } from './support/benchEnv';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION_S = Number(process.env.BENCH_DURATION_SECONDS ?? 10);

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

interface Figures {
  label: string;
  requests: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
}

/** 1000 visible items across the five tables, plus 50 unapproved videos the listing must leave out. */
async function seedProject(knex: ReturnType<typeof connectDatabase>, userId: string, projectId: string): Promise<void> {
  const base = Date.UTC(2026, 0, 1);
  const rows = (table: string, bucket: string, count: number, extra: (i: number) => Record<string, unknown> = () => ({})) =>
    Array.from({ length: count }, (_, i) => {
      const storagePath = `${userId}/${table}-${i}-${randomUUID()}.bin`;
      return {
        project_id: projectId,
        user_id: userId,
        file_url: `/api/files/${bucket}/${storagePath}`,
        file_name: `${table} ${i}`,
        storage_bucket: bucket,
        storage_path: storagePath,
        created_at: new Date(base + (i * 7 + table.length) * 1000),
        ...extra(i),
      };
    });
  await knex.batchInsert('renders', rows('renders', 'renders', 400, (i) => ({ thumbnail_path: `thumbs/${userId}/r${i}.webp`, width: 1920, height: 1080, aspect_ratio: '16:9' })), 200);
  await knex.batchInsert('images', rows('images', 'images', 200, () => ({ aspect_ratio: '1:1' })), 200);
  await knex.batchInsert('clips', rows('clips', 'clips', 200, (i) => ({ thumbnail_path: `thumbs/${userId}/c${i}.jpg`, analysis_data: { aspectRatio: '9:16' } })), 200);
  await knex.batchInsert('compiled_videos', rows('compiled_videos', 'videos', 150, (i) => ({ editing_data: { status: i < 100 ? 'approved' : 'draft', aspect_ratio: '16:9' } })), 200);
  await knex.batchInsert('generated_content', rows('generated_content', 'images', 100, () => ({ content_type: 'image' })), 200);
}

async function benchHttp(label: string, url: string, token: string, extraHeaders: Record<string, string> = {}): Promise<Figures> {
  const headers = { authorization: `Bearer ${token}`, ...extraHeaders };
  // fetch decodes gzip itself; the probe checks the content, the run below measures the bytes as sent
  const probe = await fetch(url, { headers: { authorization: headers.authorization } });
  const body = (await probe.json()) as { success?: boolean; content?: unknown[] };
  if (probe.status !== 200 || body.content?.length !== 1000) throw new Error(`${url} answered ${probe.status} with ${body.content?.length} items`);
  await autocannon({ url, connections: CONNECTIONS, duration: 1, headers });
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, headers });
  return { label, requests: r['2xx'], seconds: r.duration, p50Ms: r.latency.p50, p99Ms: r.latency.p99, failures: r.non2xx + r.errors + r.timeouts };
}

async function benchPg(databaseUrl: string, projectId: string): Promise<Figures> {
  const order = [
    { column: 'created_at', order: 'desc' as const },
    { column: 'id', order: 'desc' as const },
  ];
  const queries = [
    Render.query().where({ project_id: projectId }).orderBy(order).limit(LIBRARY_PER_TABLE),
    Image.query().where({ project_id: projectId }).orderBy(order).limit(LIBRARY_PER_TABLE),
    Clip.query().where({ project_id: projectId }).orderBy(order).limit(LIBRARY_PER_TABLE),
    CompiledVideo.query().where({ project_id: projectId }).whereRaw("editing_data->>'status' = 'approved'").orderBy(order).limit(LIBRARY_PER_TABLE),
    GeneratedContent.query().where({ project_id: projectId }).orderBy(order).limit(LIBRARY_PER_TABLE),
  ].map((q) => q.toKnexQuery().toSQL().toNative());
  const pool = new Pool({ connectionString: databaseUrl, max: CONNECTIONS });
  try {
    await Promise.all(Array.from({ length: CONNECTIONS }, () => pool.query('select 1')));
    const latencies: number[] = [];
    let failures = 0;
    const started = process.hrtime.bigint();
    const deadline = started + BigInt(DURATION_S) * 1_000_000_000n;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (process.hrtime.bigint() < deadline) {
          const t0 = process.hrtime.bigint();
          try {
            const results = await Promise.all(queries.map((q) => pool.query(q.sql, [...q.bindings])));
            if (results.reduce((n, r) => n + (r.rowCount ?? 0), 0) !== 1000) failures += 1;
            else latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          } catch {
            failures += 1;
          }
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const sorted = Float64Array.from(latencies).sort();
    const pct = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0);
    return { label: 'pg direct, the five table reads', requests: latencies.length, seconds, p50Ms: pct(50), p99Ms: pct(99), failures };
  } finally {
    await pool.end();
  }
}

function report(rows: Figures[], bytes: number): void {
  const fmt = (n: number, digits: number) => n.toFixed(digits).padStart(12);
  process.stdout.write(`\ncontent listing: 1000 items (${(bytes / 1024).toFixed(0)} KB of JSON), ${CONNECTIONS} concurrent, ${DURATION_S} s each\n`);
  process.stdout.write(`${'target'.padEnd(40)}${'requests/s'.padStart(12)}${'p50 ms'.padStart(12)}${'p99 ms'.padStart(12)}${'requests'.padStart(12)}${'failed'.padStart(12)}\n`);
  for (const r of rows) process.stdout.write(`${r.label.padEnd(40)}${fmt(r.requests / r.seconds, 0)}${fmt(r.p50Ms, 2)}${fmt(r.p99Ms, 2)}${fmt(r.requests, 0)}${fmt(r.failures, 0)}\n`);
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  const knex = connectDatabase(db.url, { min: 0, max: 4 });
  let api: BenchApi | null = null;
  let userId: string | null = null;
  try {
    const { user, session } = await signUp(knex, { name: 'Bench Library', email: `bench-${randomUUID()}@example.test`, password: `bench-${randomUUID()}-1` }, { sessionTtlDays: 1 });
    userId = user.id;
    const [project] = await knex('projects').insert({ user_id: user.id, name: 'Bench library' }).returning('id');
    await seedProject(knex, user.id, project.id);

    api = await startBenchApi(db.url);
    const url = `${api.baseUrl}/api/projects/${project.id}/content`;
    const bytes = (await (await fetch(url, { headers: { authorization: `Bearer ${session.token}` } })).arrayBuffer()).byteLength;
    const cached = await benchHttp('HTTP content (5 s server reuse)', url, session.token);
    const gzipped = await benchHttp('HTTP content, gzip (as browsers ask)', url, session.token, { 'accept-encoding': 'gzip' });
    const fresh = await benchHttp('HTTP content ?refresh=1 (every read)', `${url}?refresh=1`, session.token);
    await api.stop();
    api = null;
    const pg = await benchPg(db.url, project.id);
    const rows = [cached, gzipped, fresh, pg];
    report(rows, bytes);
    if (rows.some((r) => r.failures)) throw new Error(`failed requests: ${rows.map((r) => `${r.label} ${r.failures}`).join(', ')}`);
  } finally {
    if (api) await api.stop();
    if (userId) await knex('users').where({ id: userId }).delete();
    await knex.destroy();
    if (db.stop) await db.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
