/**
 * Image edit end to end: POST /api/ai-image-simple for a 2048 px render until the item waits in the approval
 * queue (API in its own process, the real worker entry workers/main.ts, a Temporal dev server of its own, the
 * local provider), 20 runs one after another, p50 and p95; beside the same sharp pipeline called directly in
 * this process (read the source, refine, edit, upscale x2, watermarked preview, thumbnail). The ratio of the two
 * is what the workflow adds: Temporal round trips, storage writes, the ledger and the records.
 *
 * Database: DATABASE_URL when set, else an embedded PostgreSQL in .data/bench-postgres; migrated to latest.
 * Env: BENCH_RUNS (20), BENCH_WARMUP (2).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { imageThumbnail, readSourceImage, watermarkPreview } from '../activities/imageMedia';
import { loadConfig } from '../config/env';
import { connectDatabase } from '../db/connection';
import { createProviders } from '../providers';
import { signUp } from '../services/accounts';
import { addCredits } from '../services/credits';
import { ROOT, benchDatabase, startBenchApi, type BenchApi } from './support/benchEnv';

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const PROMPT = 'a snowy winter evening with warm light in the windows';
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

interface TemporalDevServer {
  address: string;
  stop(): Promise<void>;
}
interface ServicesModule {
  freePort(): Promise<number>;
  startTemporalDevServer(opts: { cli: string; port: number; logFile?: string }): Promise<TemporalDevServer>;
}
interface ToolsModule {
  ensureTemporalCli(): string;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../scripts/lib/services') as ServicesModule;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../scripts/lib/tools') as ToolsModule;

/** A 2048 x 1536 stand-in for a render: a building under a sky, with grain so it compresses like a photo. */
async function render2048(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="2048" height="1536">
    <defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#6fa8dc"/><stop offset="1" stop-color="#cfe2f3"/></linearGradient></defs>
    <rect width="2048" height="1024" fill="url(#s)"/><rect y="1024" width="2048" height="512" fill="#6aa84f"/>
    <rect x="640" y="420" width="768" height="640" fill="#d9d2c5"/><rect x="740" y="520" width="160" height="160" fill="#3d5a80"/>
    <rect x="1148" y="520" width="160" height="160" fill="#3d5a80"/><rect x="944" y="800" width="160" height="260" fill="#7f6000"/></svg>`;
  const base = await sharp(Buffer.from(svg)).raw().toBuffer({ resolveWithObject: true });
  const grain = await sharp({ create: { width: 2048, height: 1536, channels: 3, background: { r: 0, g: 0, b: 0 }, noise: { type: 'gaussian', mean: 128, sigma: 18 } } })
    .raw()
    .toBuffer();
  const mixed = Buffer.alloc(base.data.length);
  const channels = base.info.channels;
  for (let i = 0, j = 0; i < base.data.length; i += channels, j += 3) {
    for (let c = 0; c < 3; c += 1) mixed[i + c] = Math.max(0, Math.min(255, base.data[i + c] + grain[j + c] - 128));
    if (channels === 4) mixed[i + 3] = 255;
  }
  return sharp(mixed, { raw: { width: 2048, height: 1536, channels } }).removeAlpha().jpeg({ quality: 90 }).toBuffer();
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface Figures {
  label: string;
  samples: number[];
}

function summary(f: Figures): { p50: number; p95: number; mean: number } {
  const sorted = [...f.samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length };
}

/** The real worker entry, polling the default task queues of the bench's own Temporal server. */
async function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(TSX, ['workers/main.ts'], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`worker did not start within 90 s:\n${out}`)), 90_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('worker running')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}:\n${out}`));
    });
  });
  child.stdout?.resume();
  return child;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}

async function api<T>(baseUrl: string, token: string, route: string, init: { method?: string; json?: unknown; body?: FormData } = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${baseUrl}${route}`, {
    method: init.method ?? (init.json || init.body ? 'POST' : 'GET'),
    headers: { authorization: `Bearer ${token}`, ...(init.json ? { 'content-type': 'application/json' } : {}) },
    body: init.json ? JSON.stringify(init.json) : init.body,
  });
  return { status: res.status, body: (await res.json()) as T };
}

interface ImageEditAnswer {
  result: { savedImage: { status: string; approvalId: string }; upscaledImage: { width: number; height: number } } | null;
  error?: string;
}

async function benchWorkflow(baseUrl: string, token: string, renderId: string): Promise<Figures> {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i += 1) {
    const t0 = process.hrtime.bigint();
    const res = await api<ImageEditAnswer>(baseUrl, token, '/api/ai-image-simple', {
      json: { workflow: 'ENHANCED_IMAGE_EDITING', context: { platform: 'web' }, parameters: { prompt: PROMPT, baseImage: renderId } },
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (res.status !== 200 || res.body.result?.savedImage.status !== 'pending_approval') {
      throw new Error(`POST /api/ai-image-simple answered ${res.status} ${JSON.stringify(res.body)}`);
    }
    if (i >= WARMUP) samples.push(ms);
    // outside the timing: save the item, so the pending cap never stops the next run
    const approved = await api<{ success: boolean }>(baseUrl, token, '/api/approvals/approve', { json: { approvalId: res.body.result.savedImage.approvalId } });
    if (approved.status !== 200) throw new Error(`approve answered ${approved.status} ${JSON.stringify(approved.body)}`);
  }
  return { label: 'POST /api/ai-image-simple -> pending', samples };
}

async function benchDirect(sourcePath: string): Promise<Figures> {
  const providers = createProviders({ ...loadConfig(), providerKind: 'local' });
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i += 1) {
    const t0 = process.hrtime.bigint();
    const source = await readSourceImage(sourcePath);
    const refined = await providers.promptRefiner.refine({ prompt: PROMPT });
    const edited = await providers.imageEdit.edit({ image: source, prompt: refined.refinedPrompt, format: 'square', quality: 'hd' });
    const upscaled = await providers.upscale.upscale({ image: edited.image, scale: 2 });
    await Promise.all([watermarkPreview(upscaled.image), imageThumbnail(upscaled.image)]);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (upscaled.width !== 2048) throw new Error(`direct pipeline made ${upscaled.width} px`);
    if (i >= WARMUP) samples.push(ms);
  }
  return { label: 'same sharp pipeline, direct', samples };
}

function report(workflow: Figures, direct: Figures): void {
  const w = summary(workflow);
  const d = summary(direct);
  const fmt = (n: number) => n.toFixed(1).padStart(10);
  process.stdout.write(`\nimage edit, 2048 x 1536 render, local provider, square hd, upscale x2: ${RUNS} runs each (after ${WARMUP} warm-up)\n`);
  process.stdout.write(`${'target'.padEnd(40)}${'p50 ms'.padStart(10)}${'p95 ms'.padStart(10)}${'mean ms'.padStart(10)}\n`);
  for (const [f, s] of [
    [workflow, w],
    [direct, d],
  ] as const) {
    process.stdout.write(`${f.label.padEnd(40)}${fmt(s.p50)}${fmt(s.p95)}${fmt(s.mean)}\n`);
  }
  process.stdout.write(`workflow / direct: p50 x${(w.p50 / d.p50).toFixed(2)}, p95 x${(w.p95 / d.p95).toFixed(2)} (overhead ${(w.p50 - d.p50).toFixed(0)} ms at p50)\n`);
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  const storageDir = path.join(ROOT, '.data', `bench-storage-${process.pid}`);
  const knex = connectDatabase(db.url, { min: 0, max: 2 });
  let temporal: TemporalDevServer | null = null;
  let benchApi: BenchApi | null = null;
  let worker: ChildProcess | null = null;
  let userId: string | null = null;
  try {
    temporal = await services.startTemporalDevServer({ cli: tools.ensureTemporalCli(), port: await services.freePort() });
    const env = { DATABASE_URL: db.url, TEMPORAL_ADDRESS: temporal.address, STORAGE_DIR: storageDir, AI_PROVIDER: 'local' };
    [benchApi, worker] = await Promise.all([startBenchApi(db.url, env), startWorker(env)]);

    const { user, session } = await signUp(
      knex,
      { name: 'Bench User', email: `bench-${randomUUID()}@example.test`, password: `bench-${randomUUID()}-1` },
      { sessionTtlDays: 1 },
    );
    userId = user.id;
    await addCredits(knex, { profileId: user.id, amount: WARMUP + RUNS, type: 'add', description: 'bench', idempotencyKey: `bench:${user.id}` });
    const project = await api<{ project: { id: string } }>(benchApi.baseUrl, session.token, '/api/projects', { json: { name: 'Bench' } });
    const form = new FormData();
    form.append('projectId', project.body.project.id);
    form.append('file', new Blob([new Uint8Array(await render2048())], { type: 'image/jpeg' }), 'bench-render.jpg');
    const upload = await api<{ render: { data: { id: string } } }>(benchApi.baseUrl, session.token, '/api/upload/renders', { body: form });
    if (upload.status !== 200) throw new Error(`upload answered ${upload.status} ${JSON.stringify(upload.body)}`);
    const renderRow = (await knex('renders').where({ id: upload.body.render.data.id }).first('storage_path', 'width', 'height', 'file_size')) as {
      storage_path: string;
      width: number;
      height: number;
      file_size: string;
    };
    process.stdout.write(`render: ${renderRow.width} x ${renderRow.height}, ${(Number(renderRow.file_size) / 1048576).toFixed(2)} MB JPEG\n`);

    const workflow = await benchWorkflow(benchApi.baseUrl, session.token, upload.body.render.data.id);
    await stopChild(worker);
    worker = null;
    await benchApi.stop();
    benchApi = null;
    const direct = await benchDirect(path.join(storageDir, 'renders', renderRow.storage_path));
    report(workflow, direct);
  } finally {
    if (worker) await stopChild(worker);
    if (benchApi) await benchApi.stop();
    if (temporal) await temporal.stop();
    if (userId) await knex('users').where({ id: userId }).delete();
    await knex.destroy();
    if (db.stop) await db.stop();
    fs.rmSync(storageDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
