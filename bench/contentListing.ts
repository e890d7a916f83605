/**
 * GET /api/projects/:id/content for a project with 1000 items at 50 concurrent connections (wrk, support/loadRuns.ts):
 * as clients normally ask (the server reuses a listing for 5 s), the same gzip-compressed, and with ?refresh=1 (every
 * request reads all five tables and signs every link), beside the same five table reads run straight on pg at the same
 * concurrency, in one run. The paged form (?limit=100): its first page as clients ask (reused 5 s like the listing),
 * the same gzip-compressed, with ?refresh=1, and a later page (a cursor: read every time).
 * Env: BENCH_CONNECTIONS (50), BENCH_DURATION_SECONDS (10).
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { Clip, CompiledVideo, GeneratedContent, Image, Render } from '../db/models';
import { LIBRARY_PER_TABLE } from '../domain/constants';
import { startBenchApi, withBenchDatabase, type BenchApi } from './support/benchEnv';
import { httpLoadRun, pgLoadRun, printLoadTable, type LoadFigures, type LoadShape } from './support/loadRuns';
import { figure, ratio, recordResults } from './support/results';

const SHAPE: LoadShape = { connections: Number(process.env.BENCH_CONNECTIONS ?? 50), durationS: Number(process.env.BENCH_DURATION_SECONDS ?? 10) };

/** 1000 visible items across the five tables, plus 50 unapproved videos the listing must leave out. */
async function seedProject(knex: Knex, userId: string, projectId: string): Promise<void> {
  const base = Date.UTC(2026, 0, 1);
  const rows = (table: string, bucket: string, count: number, extra: (i: number) => Record<string, unknown> = () => ({})) =>
    Array.from({ length: count }, (_, i) => {
      const storagePath = `${userId}/${table}-${i}-${randomUUID()}.bin`;
      return {
        project_id: projectId,
        workspace_id: userId,
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

async function benchHttp(label: string, url: string, token: string, extraHeaders: Record<string, string> = {}, items = 1000): Promise<LoadFigures> {
  const headers = { authorization: `Bearer ${token}`, ...extraHeaders };
  // fetch decodes gzip itself; the probe checks the content, the run below measures the bytes as sent
  const probe = await fetch(url, { headers: { authorization: headers.authorization } });
  const body = (await probe.json()) as { success?: boolean; content?: unknown[] };
  if (probe.status !== 200 || body.content?.length !== items) throw new Error(`${url} answered ${probe.status} with ${body.content?.length} items`);
  return httpLoadRun(label, url, headers, SHAPE);
}

const PAGE = 100;

async function secondPageUrl(url: string, token: string): Promise<string> {
  const first = (await (await fetch(`${url}?limit=${PAGE}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { nextCursor?: string | null };
  if (!first.nextCursor) throw new Error('the first page of the paged listing has no nextCursor');
  return `${url}?limit=${PAGE}&cursor=${first.nextCursor}`;
}

function benchPg(databaseUrl: string, projectId: string): Promise<LoadFigures> {
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
  return pgLoadRun('pg direct, the five table reads', databaseUrl, SHAPE, {
    open: (pool) => pool.query('select 1'),
    once: async (pool) => {
      const results = await Promise.all(queries.map((q) => pool.query(q.sql, [...q.bindings])));
      return results.reduce((n, r) => n + (r.rowCount ?? 0), 0) === 1000;
    },
  });
}

function report(rows: LoadFigures[], bytes: number): void {
  process.stdout.write(`\ncontent listing: 1000 items (${(bytes / 1024).toFixed(0)} KB of JSON), ${SHAPE.connections} concurrent, ${SHAPE.durationS} s each\n`);
  printLoadTable(rows, 40);
}

async function main(): Promise<void> {
  await withBenchDatabase({ max: 4 }, async (db) => {
    const user = await db.signUpUser('Bench Library');
    const [project] = await db.knex('projects').insert({ workspace_id: user.userId, name: 'Bench library' }).returning('id');
    await seedProject(db.knex, user.userId, project.id);

    let api: BenchApi | null = await startBenchApi(db.url);
    try {
      const url = `${api.baseUrl}/api/projects/${project.id}/content`;
      const bytes = (await (await fetch(url, { headers: { authorization: `Bearer ${user.token}` } })).arrayBuffer()).byteLength;
      const cached = await benchHttp('HTTP content (5 s server reuse)', url, user.token);
      const gzipped = await benchHttp('HTTP content, gzip (as browsers ask)', url, user.token, { 'accept-encoding': 'gzip' });
      const fresh = await benchHttp('HTTP content ?refresh=1 (every read)', `${url}?refresh=1`, user.token);
      const firstPage = await benchHttp(`HTTP first page of ${PAGE} (5 s reuse)`, `${url}?limit=${PAGE}`, user.token, {}, PAGE);
      const firstPageGzip = await benchHttp(`HTTP first page of ${PAGE}, gzip`, `${url}?limit=${PAGE}`, user.token, { 'accept-encoding': 'gzip' }, PAGE);
      const firstPageFresh = await benchHttp(`HTTP first page of ${PAGE} ?refresh=1`, `${url}?limit=${PAGE}&refresh=1`, user.token, {}, PAGE);
      const laterPage = await benchHttp(`HTTP second page of ${PAGE} (cursor)`, await secondPageUrl(url, user.token), user.token, {}, PAGE);
      await api.stop();
      api = null;
      const pg = await benchPg(db.url, project.id);
      const rows = [cached, gzipped, fresh, firstPage, firstPageGzip, firstPageFresh, laterPage, pg];
      report(rows, bytes);
      const rate = (f: LoadFigures) => f.requests / f.seconds;
      recordResults('contentListing', [
        ratio('refresh_vs_pg', rate(fresh) / rate(pg), 'higher', '?refresh=1 req/s over the same table reads on pg', 0.6),
        ratio('cached_vs_pg', rate(cached) / rate(pg), 'higher', 'req/s from the 5 s reuse over the same table reads on pg'),
        figure('cached_p99', cached.p99Ms, 'ms', 'lower', 'p99 latency from the 5 s reuse at the bench concurrency', 60),
        figure('cached_rps', rate(cached), 'req/s', 'higher', 'req/s from the 5 s reuse'),
        figure('gzip_p99', gzipped.p99Ms, 'ms', 'lower', 'p99 latency, gzip'),
        figure('refresh_rps', rate(fresh), 'req/s', 'higher', '?refresh=1 req/s'),
        figure('pg_rps', rate(pg), 'req/s', 'higher', 'pg direct, the five table reads'),
        figure('page1_p99', firstPage.p99Ms, 'ms', 'lower', `p99 latency of the paged listing's first page of ${PAGE} at the bench concurrency`, 15),
        figure('page1_rps', rate(firstPage), 'req/s', 'higher', `req/s, first page of ${PAGE}`),
        figure('page1_gzip_p99', firstPageGzip.p99Ms, 'ms', 'lower', `p99 latency, first page of ${PAGE} gzip-compressed (as the browser app asks)`),
        figure('page1_refresh_p99', firstPageFresh.p99Ms, 'ms', 'lower', `p99 latency, first page of ${PAGE} with ?refresh=1 (read every time)`),
        figure('page2_p99', laterPage.p99Ms, 'ms', 'lower', `p99 latency, second page of ${PAGE} by cursor (read every time)`),
      ]);
      if (rows.some((r) => r.failures)) throw new Error(`failed requests: ${rows.map((r) => `${r.label} ${r.failures}`).join(', ')}`);
    } finally {
      if (api) await api.stop();
    }
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
