/**
 * Clip workflows under load: 20 clips started at once through POST /api/video-generation/start (20 users, as a
 * user runs one clip at a time), all on ONE worker process (the real worker entry workers/main.ts, local
 * provider), a Temporal dev server of its own, the API in its own process. Measures the start call (admission
 * included), the time to each clip's completion, the total wall time and the worker's CPU time (its own plus the
 * ffmpeg processes it ran), then checks the money: before approval every user has exactly one active 4-credit
 * reservation keyed on the clip's workflow and no charge; after approving all 20 through the API, exactly one
 * 4-credit charge each; the ledger invariant holds for every user throughout.
 *
 * Database: DATABASE_URL when set, else an embedded PostgreSQL in .data/bench-postgres; migrated to latest.
 * Env: BENCH_CLIPS (20), VIDEO_PRESET (the production default, veryfast).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import type { ClipJobView } from '../domain/clipGeneration';
import { PLATFORMS, VIDEO_EFFECTS } from '../domain/constants';
import { connectDatabase } from '../db/connection';
import { signUp } from '../services/accounts';
import { checkLedgerInvariant } from '../services/credits';
import { clipWorkflowId } from '../workflows/clipGeneration';
import { ROOT, benchDatabase, startBenchApi, type BenchApi } from './support/benchEnv';

const CLIPS = Number(process.env.BENCH_CLIPS ?? 20);
const PRESET = process.env.VIDEO_PRESET ?? 'veryfast';
const CLK_TCK = 100;

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

/** A 1920 x 1080 stand-in for a render. */
async function render1080(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1920" height="1080" viewBox="0 0 480 270">
    <defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#3d85c6"/><stop offset="1" stop-color="#cfe2f3"/></linearGradient></defs>
    <rect width="480" height="190" fill="url(#s)"/><rect y="190" width="480" height="80" fill="#38761d"/>
    <rect x="40" y="90" width="120" height="110" fill="#e6e0d4"/><rect x="300" y="60" width="140" height="140" fill="#990000"/>
    <rect x="330" y="90" width="30" height="30" fill="#ffd966"/><rect x="380" y="90" width="30" height="30" fill="#ffd966"/></svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 90 }).toBuffer();
}

/** The real worker entry in a single node process (no tsx wrapper), so /proc shows its CPU and its ffmpeg children's. */
async function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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

/** utime + stime of the process, and of its children that have exited (ffmpeg runs), in seconds. */
function cpuSeconds(pid: number): { self: number; children: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // after the command: state(0) ... utime(11) stime(12) cutime(13) cstime(14)
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]) / CLK_TCK);
  return { self: utime + stime, children: cutime + cstime };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
  });
}

async function api<T>(baseUrl: string, token: string, route: string, init: { json?: unknown; body?: FormData } = {}): Promise<{ status: number; body: T }> {
  const res = await fetch(`${baseUrl}${route}`, {
    method: init.json || init.body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${token}`, ...(init.json ? { 'content-type': 'application/json' } : {}) },
    body: init.json ? JSON.stringify(init.json) : init.body,
  });
  return { status: res.status, body: (await res.json()) as T };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface Participant {
  userId: string;
  token: string;
  projectId: string;
  renderId: string;
  renderUrl: string;
}

interface Outcome {
  participant: Participant;
  jobId: string;
  startMs: number;
  doneMs: number;
  job: ClipJobView;
  progressMonotonic: boolean;
}

async function prepare(baseUrl: string, knex: ReturnType<typeof connectDatabase>, image: Buffer): Promise<Participant> {
  const { user, session } = await signUp(
    knex,
    { name: 'Clip Bench', email: `clip-bench-${randomUUID()}@example.test`, password: `bench-${randomUUID()}-1` },
    { sessionTtlDays: 1 },
  );
  const project = await api<{ project: { id: string } }>(baseUrl, session.token, '/api/projects', { json: { name: 'Clip bench' } });
  const form = new FormData();
  form.append('projectId', project.body.project.id);
  form.append('file', new Blob([new Uint8Array(image)], { type: 'image/jpeg' }), 'bench-render.jpg');
  const upload = await api<{ render: { data: { id: string; file_url: string } } }>(baseUrl, session.token, '/api/upload/renders', { body: form });
  if (upload.status !== 200 && upload.status !== 201) throw new Error(`upload answered ${upload.status} ${JSON.stringify(upload.body)}`);
  return { userId: user.id, token: session.token, projectId: project.body.project.id, renderId: upload.body.render.data.id, renderUrl: upload.body.render.data.file_url };
}

async function runClip(baseUrl: string, p: Participant, index: number, t0: number): Promise<Outcome> {
  const effect = VIDEO_EFFECTS[index % VIDEO_EFFECTS.length];
  const platform = PLATFORMS[index % PLATFORMS.length];
  const started = Date.now();
  const res = await api<{ success: boolean; jobId?: string; error?: string }>(baseUrl, p.token, '/api/video-generation/start', {
    json: { options: { imageUrl: p.renderUrl, movement: effect, duration: 5, platform }, context: { projectId: p.projectId, renderId: p.renderId } },
  });
  if (res.status !== 200 || !res.body.jobId) throw new Error(`start answered ${res.status} ${JSON.stringify(res.body)}`);
  const startMs = Date.now() - started;
  const jobId = res.body.jobId;
  let last = -1;
  let monotonic = true;
  for (;;) {
    const status = await api<{ job: ClipJobView }>(baseUrl, p.token, `/api/video-generation/status/${jobId}`);
    const job = status.body.job;
    if (job.progress < last) monotonic = false;
    last = job.progress;
    if (job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled') {
      return { participant: p, jobId, startMs, doneMs: Date.now() - t0, job, progressMonotonic: monotonic };
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

interface MoneyCheck {
  ok: boolean;
  problems: string[];
}

async function checkMoney(knex: ReturnType<typeof connectDatabase>, outcomes: Outcome[], phase: 'pending' | 'approved'): Promise<MoneyCheck> {
  const problems: string[] = [];
  for (const o of outcomes) {
    const id = o.participant.userId;
    const invariant = await checkLedgerInvariant(knex, id);
    if (!invariant.ok) problems.push(`${id}: ledger invariant ${JSON.stringify(invariant)}`);
    const reservations = (await knex('credit_reservations').where({ profile_id: id }).select('idempotency_key', 'status', 'amount')) as Array<{ idempotency_key: string; status: string; amount: number }>;
    const consumes = (await knex('credit_transactions').where({ profile_id: id, transaction_type: 'consume' }).select('amount')) as Array<{ amount: number }>;
    const profile = (await knex('profiles').where({ id }).first('credits', 'reserved_credits')) as { credits: number; reserved_credits: number };
    const expected = phase === 'pending' ? { credits: 5, reserved: 4, reservation: 'active', consumes: 0 } : { credits: 1, reserved: 0, reservation: 'consumed', consumes: 1 };
    if (reservations.length !== 1 || reservations[0].idempotency_key !== clipWorkflowId(o.jobId) || reservations[0].amount !== 4 || reservations[0].status !== expected.reservation) {
      problems.push(`${id}: reservations ${JSON.stringify(reservations)}`);
    }
    if (consumes.length !== expected.consumes || consumes.some((c) => c.amount !== -4)) problems.push(`${id}: charges ${JSON.stringify(consumes)}`);
    if (profile.credits !== expected.credits || profile.reserved_credits !== expected.reserved) problems.push(`${id}: balance ${JSON.stringify(profile)}`);
  }
  return { ok: problems.length === 0, problems };
}

async function main(): Promise<void> {
  const db = await benchDatabase();
  const storageDir = path.join(ROOT, '.data', `bench-storage-${process.pid}`);
  const workDir = path.join(ROOT, '.data', `bench-providers-${process.pid}`);
  const knex = connectDatabase(db.url, { min: 0, max: 4 });
  let temporal: TemporalDevServer | null = null;
  let benchApi: BenchApi | null = null;
  let worker: ChildProcess | null = null;
  const userIds: string[] = [];
  try {
    temporal = await services.startTemporalDevServer({ cli: tools.ensureTemporalCli(), port: await services.freePort() });
    const env = { DATABASE_URL: db.url, TEMPORAL_ADDRESS: temporal.address, STORAGE_DIR: storageDir, AI_PROVIDER: 'local', VIDEO_PRESET: PRESET, TMPDIR: workDir };
    fs.mkdirSync(workDir, { recursive: true });
    [benchApi, worker] = await Promise.all([startBenchApi(db.url, env), startWorker(env)]);
    const image = await render1080();
    const participants: Participant[] = [];
    for (let i = 0; i < CLIPS; i += 1) {
      const p = await prepare(benchApi.baseUrl, knex, image);
      participants.push(p);
      userIds.push(p.userId);
    }
    const cpuBefore = cpuSeconds(worker.pid as number);

    const t0 = Date.now();
    const outcomes = await Promise.all(participants.map((p, i) => runClip((benchApi as BenchApi).baseUrl, p, i, t0)));
    const wallMs = Date.now() - t0;
    const cpuAfter = cpuSeconds(worker.pid as number);

    const failed = outcomes.filter((o) => o.job.status !== 'completed');
    const pending = await checkMoney(knex, outcomes, 'pending');
    for (const o of outcomes.filter((x) => x.job.status === 'completed')) {
      const approved = await api<{ success: boolean }>(benchApi.baseUrl, o.participant.token, '/api/approvals/approve', { json: { approvalId: o.job.result?.approvalId } });
      if (approved.status !== 200) throw new Error(`approve answered ${approved.status} ${JSON.stringify(approved.body)}`);
    }
    const approved = await checkMoney(knex, outcomes, 'approved');

    const starts = outcomes.map((o) => o.startMs).sort((a, b) => a - b);
    const dones = outcomes.map((o) => o.doneMs).sort((a, b) => a - b);
    const fmt = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    process.stdout.write(`\n${CLIPS} clip workflows started at once on one worker (local provider, x264 ${PRESET}, 5 s at 30 fps, platforms cycled over 16:9 / 9:16 / 1:1)\n`);
    process.stdout.write(`completed: ${outcomes.length - failed.length}/${outcomes.length}${failed.length ? ` (not completed: ${failed.map((f) => `${f.jobId} ${f.job.status}`).join(', ')})` : ''}\n`);
    process.stdout.write(`total wall time: ${fmt(wallMs)}  (${(wallMs / 1000 / CLIPS).toFixed(1)} s per clip)\n`);
    process.stdout.write(`start call (admission included): p50 ${starts[Math.floor(starts.length / 2)]} ms, p95 ${percentile(starts, 95)} ms, max ${starts.at(-1)} ms\n`);
    process.stdout.write(`time to completed: first ${fmt(dones[0])}, p50 ${fmt(percentile(dones, 50))}, p95 ${fmt(percentile(dones, 95))}, last ${fmt(dones.at(-1) as number)}\n`);
    process.stdout.write(
      `worker CPU: ${(cpuAfter.self - cpuBefore.self).toFixed(1)} s in the worker process + ${(cpuAfter.children - cpuBefore.children).toFixed(1)} s in its ffmpeg runs ` +
        `(${((cpuAfter.self - cpuBefore.self + cpuAfter.children - cpuBefore.children) / (wallMs / 1000)).toFixed(2)} cores busy on average)\n`,
    );
    process.stdout.write(`progress never went back: ${outcomes.every((o) => o.progressMonotonic) ? 'yes' : 'NO'}\n`);
    process.stdout.write(`credits before approval (one active 4-credit reservation each, nothing charged, ledger invariant): ${pending.ok ? 'ok' : 'BROKEN'}\n`);
    process.stdout.write(`credits after approving all (one 4-credit charge each, nothing reserved, ledger invariant): ${approved.ok ? 'ok' : 'BROKEN'}\n`);
    for (const problem of [...pending.problems, ...approved.problems]) process.stdout.write(`  ${problem}\n`);
    if (failed.length || !pending.ok || !approved.ok || !outcomes.every((o) => o.progressMonotonic)) process.exitCode = 1;
  } finally {
    if (worker) await stopChild(worker);
    if (benchApi) await benchApi.stop();
    if (temporal) await temporal.stop();
    if (userIds.length) await knex('users').whereIn('id', userIds).delete();
    await knex.destroy();
    if (db.stop) await db.stop();
    fs.rmSync(storageDir, { recursive: true, force: true });
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
