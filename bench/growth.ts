/**
 * The cost of growth (issue 28, item 5): for 1k, 10k and 100k rows of each of a project's library items, an account's
 * ledger rows, pending approvals, activity jobs and a draft's versions (draft jobs), seeded with generate_series, the
 * paged endpoints behind them are timed over HTTP (their first page, and a deep page through the cursor or page
 * number where the endpoint has one) and the SQL each request runs is captured and EXPLAINed (ANALYZE, BUFFERS): does
 * the plan reach the rows by index, without sorting the whole set? The target is flat: p99 at 100k within 2x of p99
 * at 1k (MET or MISSED per endpoint).
 *
 * Timing: the API in its own process (support/appServer.ts, as the other benches), requests one after another (no
 * concurrency: this measures the cost of one request as the data grows, not throughput), `BENCH_GROWTH_SAMPLES`
 * (default 30) per endpoint and size after 3 warm-up requests, fewer when one request takes long (at most
 * BENCH_GROWTH_SECONDS, default 6 s, per endpoint and size, and never fewer than 5). The SQL: the same request served
 * once more by an in-process app (reader threads off, so every query goes through one knex whose 'query' events are
 * recorded); every SELECT on the dataset's table is EXPLAINed with its bindings.
 *
 * Env: BENCH_GROWTH_SIZES (1000,10000,100000), BENCH_GROWTH_PLANS (file for the EXPLAIN texts of the largest size;
 * default .data/bench-growth-plans.md).
 */
import fs from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { knexConfig } from '../db/connection';
import { encodeTransactionCursor } from '../services/billing/creditLedger/reporting';
import { ROOT, startBenchApi, withBenchDatabase, type BenchApi, type BenchUser } from './support/benchEnv';
import { figure, ratio, recordResults, type BenchMeasure } from './support/results';
import { percentile } from './support/stats';

const SIZES = (process.env.BENCH_GROWTH_SIZES ?? '1000,10000,100000').split(',').map((s) => Number(s.trim()));
const SAMPLES = Number(process.env.BENCH_GROWTH_SAMPLES ?? 30);
const BUDGET_MS = Number(process.env.BENCH_GROWTH_SECONDS ?? 6) * 1000;
const PLANS_FILE = path.resolve(ROOT, process.env.BENCH_GROWTH_PLANS ?? path.join('.data', 'bench-growth-plans.md'));
/** p99 at the largest size over p99 at the smallest: at most this is "flat". */
const FLAT_RATIO = 2;
const PAGE = 50;
/** Enhance Renders is locked for everyone without an access code; the seeded users have unlocked it. */
const ENHANCE = { ENHANCE_ACCESS_CODE: process.env.ENHANCE_ACCESS_CODE || 'GROWTH-BENCH' };

interface ServicesModule {
  freePort(): Promise<number>;
  startTemporalDevServer(opts: { cli: string; port: number; logFile?: string }): Promise<{ address: string; stop(): Promise<void> }>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../scripts/lib/services') as ServicesModule;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../scripts/lib/tools') as { ensureTemporalCli(): string };

/** What one size's seed made: the ids the endpoints are asked about. */
interface Seeded {
  user: BenchUser;
  projectId: string;
  draftId: string;
  /** a cursor (library) at 90 % of the listing */
  libraryDeepCursor: string;
  /** the ledger page at 90 % of the ledger */
  ledgerDeepPage: number;
  /** the cursor (ledger) that asks for that page */
  ledgerDeepCursor: string;
}

interface Endpoint {
  key: string;
  dataset: string;
  /** the table whose growth this measures (the captured SELECTs on it are EXPLAINed) */
  table: string;
  what: string;
  path: (s: Seeded) => string;
}

const ENDPOINTS: Endpoint[] = [
  { key: 'library_first', dataset: 'library items of one project', table: 'renders', what: `first page of ${PAGE} (?refresh=1)`, path: (s) => `/api/projects/${s.projectId}/content?limit=${PAGE}&refresh=1` },
  { key: 'library_deep', dataset: 'library items of one project', table: 'renders', what: `page at 90 % by cursor`, path: (s) => `/api/projects/${s.projectId}/content?limit=${PAGE}&cursor=${s.libraryDeepCursor}` },
  { key: 'ledger_first', dataset: 'ledger rows of one account', table: 'credit_transactions', what: 'page 1 (50 a page)', path: () => '/api/credits/transactions?page=1' },
  { key: 'ledger_deep', dataset: 'ledger rows of one account', table: 'credit_transactions', what: 'page at 90 % by cursor', path: (s) => `/api/credits/transactions?cursor=${s.ledgerDeepCursor}` },
  { key: 'approvals', dataset: 'pending approvals', table: 'pending_approvals', what: 'the whole list (not paged)', path: () => '/api/approvals/list' },
  { key: 'jobs', dataset: 'activity jobs (clips)', table: 'video_generation_jobs', what: 'the 50 newest (not paged)', path: () => '/api/jobs' },
  { key: 'draft_versions', dataset: "a draft's versions (draft jobs)", table: 'draft_jobs', what: 'the draft with its images (not paged)', path: (s) => `/api/enhance-set/drafts/get?draftId=${s.draftId}` },
];

/** Every dataset of one size for a new user, by generate_series: rows one second apart, newest last. */
async function seed(knex: Knex, user: BenchUser, n: number): Promise<Seeded> {
  const u = user.userId;
  await knex('profiles').where({ id: u }).update({ enhance_unlocked_at: knex.fn.now() });
  const [project] = (await knex('projects').insert({ workspace_id: u, name: `Growth ${n}` }).returning('id')) as Array<{ id: string }>;
  const p = project.id;
  const base = "timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second'";
  await knex.raw(
    `insert into renders (project_id, workspace_id, file_url, file_name, storage_bucket, storage_path, width, height, created_at, updated_at)
     select :p, :u, '/api/files/renders/' || :u || '/g' || i || '.png', 'render ' || i, 'renders', :u || '/g' || i || '.png', 1920, 1080, ${base}, ${base}
     from generate_series(1, :n) i`,
    { p, u, n },
  );
  await knex.raw(
    `insert into credit_transactions (workspace_id, amount, balance_after, transaction_type, description, idempotency_key, created_at)
     select :u, 1, i, 'add', 'growth ' || i, 'growth-' || :u || '-' || i, ${base} from generate_series(1, :n) i`,
    { u, n },
  );
  await knex.raw(
    `insert into pending_approvals (workspace_id, project_id, content_type, status, file_name, original_bucket, original_path, watermarked_bucket, watermarked_path,
       approval_deadline, cost, remaining_cost, workflow_id, created_at)
     select :u, :p, 'image', 'pending', 'item ' || i, 'images', :u || '/a' || i || '.png', 'images', :u || '/w' || i || '.png',
       now() + interval '7 days', 1, 1, 'growth-approval-' || :u || '-' || i, ${base} from generate_series(1, :n) i`,
    { u, p, n },
  );
  await knex.raw(
    `insert into video_generation_jobs (workspace_id, project_id, status, progress, workflow_id, created_at, updated_at)
     select :u, :p, 'completed', 100, 'growth-clip-' || :u || '-' || i, ${base}, ${base} from generate_series(1, :n) i`,
    { u, p, n },
  );
  const [draft] = (await knex('drafts').insert({ workspace_id: u, name: `Growth draft ${n}` }).returning('id')) as Array<{ id: string }>;
  const images = (await knex('draft_images')
    .insert([0, 1, 2, 3].map((i) => ({ draft_id: draft.id, name: `image ${i}`, source_url: `/api/files/drafts/${u}/${draft.id}/uploads/${i}.png`, order_index: i })))
    .returning('id')) as Array<{ id: string }>;
  await knex.raw(
    `insert into draft_jobs (draft_id, draft_image_id, workspace_id, model_id, mode, status, workflow_id, created_at, updated_at, completed_at)
     select :d, (:images::uuid[])[1 + i % 4], :u, 'growth-model', 'edit', 'completed', 'growth-draft-' || :u || '-' || i, ${base}, ${base}, ${base}
     from generate_series(1, :n) i`,
    { d: draft.id, images: images.map((r) => r.id), u, n },
  );
  await knex.raw('analyze renders, credit_transactions, pending_approvals, video_generation_jobs, draft_jobs');
  // the row at 90 % of the listing's order (services/content/library.ts: creation time to the millisecond, then id)
  const deep = (await knex.raw(
    `select to_char(date_trunc('milliseconds', created_at at time zone 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, id from renders
     where project_id = ? order by date_trunc('milliseconds', created_at at time zone 'UTC') desc, id desc offset ? limit 1`,
    [p, Math.floor(n * 0.9)],
  )) as { rows: Array<{ at: string; id: string }> };
  const libraryDeepCursor = Buffer.from(JSON.stringify([deep.rows[0].at, deep.rows[0].id])).toString('base64url');
  // the ledger row that ends the page before the one at 90 % (newest first; the sign-up bonus is the account's oldest row)
  const ledgerDeepPage = Math.max(2, Math.floor((n * 0.9) / PAGE));
  const ledgerTotal = Number(((await knex('credit_transactions').where({ workspace_id: u }).count({ c: '*' })) as Array<{ c: string }>)[0].c);
  const [ledgerRow] = (await knex('credit_transactions')
    .where({ workspace_id: u })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .offset((ledgerDeepPage - 1) * PAGE - 1)
    .limit(1)
    .select('id')) as Array<{ id: string }>;
  const ledgerDeepCursor = encodeTransactionCursor({ after: ledgerRow.id, page: ledgerDeepPage, total: ledgerTotal });
  return { user, projectId: p, draftId: draft.id, libraryDeepCursor, ledgerDeepPage, ledgerDeepCursor };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string, token: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

interface Timing {
  p50: number;
  p99: number;
  samples: number;
  bytes: number;
}

async function time(url: string, token: string): Promise<Timing> {
  for (let i = 0; i < 3; i += 1) {
    const r = await get(url, token);
    if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
  }
  const took: number[] = [];
  let bytes = 0;
  const started = performance.now();
  while (took.length < SAMPLES && (took.length < 5 || performance.now() - started < BUDGET_MS)) {
    const t0 = performance.now();
    const r = await get(url, token);
    took.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`${url} answered ${r.status}`);
    bytes = r.bytes;
  }
  took.sort((a, b) => a - b);
  return { p50: percentile(took, 50), p99: percentile(took, 99), samples: took.length, bytes };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Sort Key'?: string[];
  Plans?: PlanNode[];
}

interface PlanSummary {
  /** how the dataset's table is read: "Index Scan renders_listing_order", "Seq Scan" ... */
  access: string[];
  /** Sort nodes over at least half the set (a sort of the whole set) */
  wholeSorts: number;
  /** rows the plan read from the dataset's table */
  rowsRead: number;
  executionMs: number;
  sharedHit: number;
  sharedRead: number;
  text: string;
}

function walk(node: PlanNode, visit: (n: PlanNode) => void): void {
  visit(node);
  for (const child of node.Plans ?? []) walk(child, visit);
}

/** The in-process app whose knex records every query it runs. */
async function captureApp(databaseUrl: string, temporalAddress: string): Promise<{ baseUrl: string; run: (url: string, token: string) => Promise<Array<{ sql: string; bindings: unknown[] }>>; close: () => Promise<void> }> {
  const { loadConfig } = await import('../config/env');
  const { logger } = await import('../config/logger');
  const { buildAppDeps } = await import('../api/deps');
  const { createApp } = await import('../api/app');
  const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress, LISTING_READER_THREADS: '0', PORT: '0', ...ENHANCE });
  // its request lines would interleave with the figures
  const runtime = buildAppDeps(config, logger.child({}, { level: 'warn' }));
  let recording: Array<{ sql: string; bindings: unknown[] }> | null = null;
  runtime.deps.knex.on('query', (q: { sql: string; bindings?: unknown[] }) => recording?.push({ sql: q.sql, bindings: [...(q.bindings ?? [])] }));
  const server = http.createServer(createApp(runtime.deps).callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    run: async (url, token) => {
      recording = [];
      const r = await fetch(`${baseUrl}${url}`, { headers: { authorization: `Bearer ${token}` } });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`capture: ${url} answered ${r.status}`);
      const got = recording;
      recording = null;
      return got;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.close();
    },
  };
}

/** EXPLAIN (ANALYZE, BUFFERS) of each captured SELECT on `table`, summed into one summary. */
async function explain(client: pg.Client, knex: Knex, queries: Array<{ sql: string; bindings: unknown[] }>, table: string, n: number): Promise<PlanSummary> {
  const summary: PlanSummary = { access: [], wholeSorts: 0, rowsRead: 0, executionMs: 0, sharedHit: 0, sharedRead: 0, text: '' };
  const onTable = queries.filter((q) => /^\s*(with|select)\b/i.test(q.sql) && new RegExp(`\\b${table}\\b`).test(q.sql));
  if (!onTable.length) throw new Error(`no SELECT on ${table} was captured`);
  for (const q of onTable) {
    const native = /\$\d/.test(q.sql) ? { sql: q.sql, bindings: q.bindings } : knex.raw(q.sql, q.bindings as Knex.RawBinding[]).toSQL().toNative();
    const json = (await client.query(`explain (analyze, buffers, format json) ${native.sql}`, [...native.bindings])).rows[0]['QUERY PLAN'] as Array<{
      Plan: PlanNode & { 'Shared Hit Blocks'?: number; 'Shared Read Blocks'?: number };
      'Execution Time': number;
    }>;
    const text = (await client.query(`explain (analyze, buffers, costs off, timing off) ${native.sql}`, [...native.bindings])).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    const root = json[0];
    summary.executionMs += root['Execution Time'];
    summary.sharedHit += root.Plan['Shared Hit Blocks'] ?? 0;
    summary.sharedRead += root.Plan['Shared Read Blocks'] ?? 0;
    walk(root.Plan, (node) => {
      if (node['Relation Name'] === table) {
        summary.access.push(`${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''}`);
        summary.rowsRead += (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1);
      }
      if (node['Node Type'] === 'Sort' || node['Node Type'] === 'Incremental Sort') {
        const input = (node.Plans ?? []).reduce((sum, c) => sum + (c['Actual Rows'] ?? 0) * (c['Actual Loops'] ?? 1), 0);
        if (input >= n / 2) summary.wholeSorts += 1;
      }
    });
    summary.text += `${summary.text ? '\n\n' : ''}${native.sql}\n-- bindings: ${JSON.stringify(native.bindings)}\n${text}`;
  }
  summary.access = [...new Set(summary.access)];
  return summary;
}

interface Row {
  endpoint: Endpoint;
  size: number;
  timing: Timing;
  plan: PlanSummary;
}

function fmt(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}

function byIndex(plan: PlanSummary): boolean {
  return plan.access.length > 0 && plan.access.every((a) => /Index/.test(a));
}

async function main(): Promise<void> {
  const temporal = await services.startTemporalDevServer({ cli: tools.ensureTemporalCli(), port: await services.freePort() });
  let api: BenchApi | null = null;
  try {
    await withBenchDatabase({ max: 4 }, async (db) => {
      api = await startBenchApi(db.url, { TEMPORAL_ADDRESS: temporal.address, ...ENHANCE });
      const capture = await captureApp(db.url, temporal.address);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      // bulk seeding and clearing are no requests: no statement timeout (100k rows, each notifying its project's change)
      // (a plain pool: connectDatabase would bind the objection models, which the capturing app reads through, to it)
      const bulk = knexFactory(knexConfig(db.url, { min: 0, max: 1 }, { queryTimeoutMs: 0 }));
      const rows: Row[] = [];
      const plans: string[] = [];
      const seededUsers: BenchUser[] = [];
      try {
        for (const size of SIZES) {
          const t0 = performance.now();
          const user = await db.signUpUser(`Growth ${size}`);
          seededUsers.push(user);
          const seeded = await seed(bulk, user, size);
          process.stdout.write(`seeded ${size} rows of each dataset in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
          for (const endpoint of ENDPOINTS) {
            const url = endpoint.path(seeded);
            const timing = await time(`${api!.baseUrl}${url}`, seeded.user.token);
            const plan = await explain(client, db.knex, await capture.run(url, seeded.user.token), endpoint.table, size);
            rows.push({ endpoint, size, timing, plan });
            process.stdout.write(
              `  ${endpoint.key.padEnd(15)} ${String(size).padStart(6)}  p50 ${fmt(timing.p50).padStart(7)} ms  p99 ${fmt(timing.p99).padStart(7)} ms  (${timing.samples})  sql ${fmt(plan.executionMs)} ms, ${plan.rowsRead} rows read, ${plan.access.join(', ')}${plan.wholeSorts ? ', SORT OF THE WHOLE SET' : ''}\n`,
            );
            if (size === SIZES[SIZES.length - 1]) plans.push(`### ${endpoint.key}: ${endpoint.dataset}, ${endpoint.what}, ${size} rows\n\n\`\`\`\n${plan.text}\n\`\`\``);
          }
        }
      } finally {
        await client.end();
        await capture.close();
      }
      report(rows, plans);
      // set-based, before the bench's users go (a cascade from 100k users' rows would take one statement per row)
      const ids = seededUsers.map((u) => u.userId);
      try {
        for (const table of ['draft_jobs', 'video_generation_jobs', 'pending_approvals', 'credit_transactions', 'renders']) {
          await bulk(table).whereIn('workspace_id', ids).delete();
        }
      } finally {
        await bulk.destroy();
      }
    });
  } finally {
    if (api) await (api as BenchApi).stop();
    await temporal.stop();
  }
}

function report(rows: Row[], plans: string[]): void {
  const small = SIZES[0];
  const large = SIZES[SIZES.length - 1];
  const lines = [
    `| dataset | endpoint | ${SIZES.map((s) => `p50 / p99 at ${s / 1000}k (ms)`).join(' | ')} | p50 ${large / 1000}k/${small / 1000}k | p99 ${large / 1000}k/${small / 1000}k | rows read at ${large / 1000}k | plan at ${large / 1000}k | flat |`,
    `|---|---|${SIZES.map(() => '---').join('|')}|---|---|---|---|---|`,
  ];
  const measures: BenchMeasure[] = [];
  for (const endpoint of ENDPOINTS) {
    const of = (size: number) => rows.find((r) => r.endpoint === endpoint && r.size === size) as Row;
    const first = of(small);
    const last = of(large);
    const growth = last.timing.p99 / first.timing.p99;
    const planFlat = byIndex(last.plan) && last.plan.wholeSorts === 0;
    const met = growth <= FLAT_RATIO && planFlat;
    const plan = `${last.plan.access.join(', ')}${last.plan.wholeSorts ? `; sort of the whole set` : '; no sort of the whole set'}`;
    lines.push(
      `| ${endpoint.dataset} | \`${endpoint.path({ projectId: ':id', draftId: ':id', libraryDeepCursor: '…', ledgerDeepPage: 0.9 * large / PAGE, ledgerDeepCursor: '…' } as Seeded).replace(/\?.*$/, '')}\` ${endpoint.what} | ${SIZES.map((s) => `${fmt(of(s).timing.p50)} / ${fmt(of(s).timing.p99)}`).join(' | ')} | ${(last.timing.p50 / first.timing.p50).toFixed(2)}x | ${growth.toFixed(2)}x | ${last.plan.rowsRead} | ${plan} | ${met ? 'MET' : 'MISSED'} |`,
    );
    measures.push(ratio(`${endpoint.key}_p99_growth`, growth, 'lower', `${endpoint.dataset}, ${endpoint.what}: p99 at ${large} rows over p99 at ${small} (flat: at most ${FLAT_RATIO}x)`, FLAT_RATIO));
    measures.push(figure(`${endpoint.key}_p99_${large / 1000}k`, last.timing.p99, 'ms', 'lower', `${endpoint.dataset}, ${endpoint.what}: p99 at ${large} rows, one request at a time`));
    measures.push(figure(`${endpoint.key}_rows_read_${large / 1000}k`, last.plan.rowsRead, 'rows', 'lower', `${endpoint.dataset}, ${endpoint.what}: rows its SQL reads from ${endpoint.table} at ${large} rows (EXPLAIN ANALYZE)`));
  }
  process.stdout.write(`\ncost of growth: one request at a time, up to ${SAMPLES} samples per cell; flat = p99 ${large / 1000}k/${small / 1000}k <= ${FLAT_RATIO}x and the plan reads by index with no sort of the whole set\n\n${lines.join('\n')}\n\n`);
  const generated = `Measured by \`npm run bench -- growth\` on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.\n\n${lines.join('\n')}\n\n## EXPLAIN (ANALYZE, BUFFERS) of each query at ${large} rows\n\n${plans.join('\n\n')}`;
  fs.mkdirSync(path.dirname(PLANS_FILE), { recursive: true });
  // a page that has the markers keeps what is around them (the findings written by hand); else the figures alone
  const before = fs.existsSync(PLANS_FILE) ? fs.readFileSync(PLANS_FILE, 'utf8') : '';
  const [start, end] = ['<!-- growth-results:start -->', '<!-- growth-results:end -->'];
  const at = before.indexOf(start);
  const until = before.indexOf(end);
  fs.writeFileSync(
    PLANS_FILE,
    at >= 0 && until > at ? `${before.slice(0, at + start.length)}\n${generated}\n${before.slice(until)}` : `# Cost of growth\n\n${start}\n${generated}\n${end}\n`,
  );
  process.stdout.write(`the EXPLAIN of every query at ${large} rows: ${path.relative(ROOT, PLANS_FILE)}\n`);
  recordResults('growth', measures);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
