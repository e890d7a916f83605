/**
 * Capacity of worker processes for hosted jobs (issue 28, item 4; docs/benchmarks.md "Worker capacity").
 *
 * The hosted provider is the fake fal (tests/support/fakeFal.ts) in latency mode: each clip takes a time drawn from
 * 60-120 s (seeded), answering status polls as fal does meanwhile. The real worker entry (workers/main.ts) runs with
 * AI_PROVIDER=fal against it, on a database of the bench's own, a Temporal dev server of its own and a storage folder
 * of its own. Clips are started at the service layer the API's start route calls (VideoGenerationService.start: the
 * same admission, update-with-start and reservation), one per account, since a workspace runs one clip at a time:
 * the accounts are made in bulk (bench/capacity/fixtures.ts).
 *
 * Runs, one after another: CAPACITY_JOBS clips (1000) in flight at once on ONE worker process, then the same number
 * on TWO. Each run waits for every clip to reach a final state, approves every clip through ApprovalService (the
 * approve route's service: that is when a clip is charged) and checks the money: one 4-credit consume row per
 * account, balance = ledger sum. Throughput is completed clips per minute from the first start to the last
 * completion, and the issue's target for two workers over one is >= 1.8x. What limits it is printed beside it: the
 * time each step took (from the sampled histories), the worker CPU per clip and the machine's load average.
 *
 * Reported per run: worker RSS per in-flight clip (peak minus idle, over the clips), activity slots used at peak
 * (the SDK's temporal_worker_task_slots_used per queue), schedule-to-start latency (from a sample of histories, and
 * the SDK's histogram means), history length per run (the sample), worker CPU per clip (its own and its ffmpeg's).
 *
 * Env: CAPACITY_JOBS (1000), CAPACITY_WORKERS ("1,2": the runs' worker counts), CAPACITY_CLIP_SECONDS
 * ("60-120"), CAPACITY_IMAGE_SECONDS ("5-15"), CAPACITY_SEED (28), CAPACITY_HISTORY_SAMPLE (40), CAPACITY_VIDEO
 * ("160x90x2": the fake's clip, width x height x seconds; small, so the preview encode, which is CPU work and not
 * waiting, stays small: clipWorkflows measures that encode). The workers read the usual settings (FAL_VIDEO_POLL_INTERVAL_MS, WORKER_ACTIVITY_CONCURRENCY, MEDIA_ACTIVITY_CONCURRENCY, WORKFLOW_CACHE_SIZE,
 * WORKER_DATABASE_POOL_MAX) from the environment. CAPACITY_CALLBACKS (on): the fake calls back (fal's signed webhook) to
 * the API's callback route, served by the bench, and the clips wait for it (FAL_WEBHOOK_BASE_URL); off: they poll. CAPACITY_WORKER_CPUS (unset: no limit) gives each worker process a
 * CPU limit of that many cores in a cgroup of its own (bench/support/cpuLimit.ts; root), as a container's CPU limit
 * does in production, to make a worker and not the shared machine the bound (docs/benchmarks.md says what a 0.6 limit
 * showed). Database: DATABASE_URL's server (a database created and dropped for the run), else an embedded PostgreSQL
 * in .data/bench-postgres.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection } from '@temporalio/client';
import Koa from 'koa';
import { providerCallbacksRouter } from '../api/routes/providerCallbacks';
import { loadConfig } from '../config/env';
import { logger } from '../config/logger';
import { DomainError } from '../domain/errors';
import { closeTemporalClient } from '../services/platform/temporalClient';
import knexFactory, { type Knex } from 'knex';
import { aspectForPlatform } from '../domain/clipGeneration';
import { CREDIT_COST, PLATFORMS, VIDEO_EFFECTS } from '../domain/constants';
import { connectDatabase } from '../db/connection';
import { checkLedgerInvariant } from '../services/billing/credits';
import { ApprovalService } from '../services/generation/approvals';
import { VideoGenerationService, defaultClipQueues } from '../services/generation/videoGeneration';
import { createStorage, type Storage } from '../storage';
import { clipWorkflowId } from '../workflows/clipGeneration';
import { startFakeFal, type FakeFal } from '../tests/support/fakeFal';
import { ROOT, profileArgs, stopProcess } from './support/benchEnv';
import { limitCpu, type CpuLimit } from './support/cpuLimit';
import { rssKb } from './support/procStats';
import { treeCpuSeconds } from './soak/probes';
import { figure, ratio, recordResults, type BenchMeasure } from './support/results';
import { createCapacityAccounts, eachLimited, type CapacityAccount } from './capacity/fixtures';
import {
  PeakTracker,
  activityDurations,
  checkCharges,
  flattenEvent,
  metricSum,
  parsePrometheus,
  parseSecondsRange,
  rssPerJobKb,
  scheduleToStart,
  spread,
  targetLine,
  throughputPerMinute,
  waitShare,
  type Spread,
  type Target,
} from './capacity/report';

const JOBS = Number(process.env.CAPACITY_JOBS ?? 1000);
const WORKER_COUNTS = (process.env.CAPACITY_WORKERS ?? '1,2').split(',').map((n) => Number(n.trim()));
const CLIP_MS = parseSecondsRange(process.env.CAPACITY_CLIP_SECONDS ?? '60-120', 'CAPACITY_CLIP_SECONDS');
const IMAGE_MS = parseSecondsRange(process.env.CAPACITY_IMAGE_SECONDS ?? '5-15', 'CAPACITY_IMAGE_SECONDS');
const SEED = Number(process.env.CAPACITY_SEED ?? 28);
const HISTORY_SAMPLE = Number(process.env.CAPACITY_HISTORY_SAMPLE ?? 40);
const [VIDEO_W, VIDEO_H, VIDEO_S] = (process.env.CAPACITY_VIDEO ?? '160x90x2').split('x').map(Number);
/** Starts at once: each start waits for its admission (update-with-start), as the API's start route does. */
const START_CONCURRENCY = 20;
/**
 * A start that answers 503 (the admission did not come back within the service's 20 s: the workflow is cancelled and
 * its reservation released) is pressed again after a pause, as a user would press Start again. Until the cancelled
 * attempt's workflow has cleaned up, which on a busy worker takes minutes, its row stays active and a start answers
 * 409 (one clip at a time): pressed again too. A start still refused after START_PRESS_WINDOW_MS from its first
 * refusal is given up and counted as not started; the report counts the starts that took more than one press.
 */
const START_RETRY_PAUSE_MS = 15_000;
const START_PRESS_WINDOW_MS = 10 * 60_000;
const WORKER_CPUS = process.env.CAPACITY_WORKER_CPUS ? Number(process.env.CAPACITY_WORKER_CPUS) : null;
const FAL_KEY = 'capacity-bench-key';
const CALLBACKS = (process.env.CAPACITY_CALLBACKS ?? 'on') !== 'off';
const TARGET_CPU_PER_CLIP = 0.25;
const TARGET_HISTORY_LENGTH = 60;

/** The API's provider callback route alone (api/routes/providerCallbacks.ts), on a port of its own. */
async function startCallbackReceiver(env: Record<string, string>, knex: Knex): Promise<{ baseUrl: string; close: () => Promise<void> }> {
  const config = loadConfig({ ...process.env, ...env });
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      ctx.status = err instanceof DomainError ? err.status : ((err as { status?: number }).status ?? 500);
      ctx.body = { success: false, error: err instanceof Error ? err.message : String(err) };
    }
  });
  app.use(providerCallbacksRouter({ knex, config, logger }).routes());
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
const VIDEO_MODEL = 'fal-ai/kling-video/v2.1/standard/image-to-video';
const CLK_TCK = 100;
const TARGET_RATIO = 1.8;

interface ServicesModule {
  freePort(): Promise<number>;
  startEmbeddedPostgres(opts: { dataDir: string; port: number }): Promise<{ url: string; ensureDatabase(name: string): Promise<void>; stop(): Promise<void> }>;
  startTemporalDevServer(opts: { cli: string; port: number; logFile?: string }): Promise<{ address: string; pid: number; stop(): Promise<void> }>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../scripts/lib/services') as ServicesModule;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../scripts/lib/tools') as { ensureTemporalCli(): string };

const log = (line: string): void => {
  process.stdout.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A database of the bench's own: created on DATABASE_URL's server and dropped afterwards, else the embedded one. */
async function ownDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  let url: string;
  let drop: () => Promise<void>;
  if (process.env.DATABASE_URL) {
    const admin = new URL(process.env.DATABASE_URL);
    admin.pathname = '/postgres';
    const name = `rs_capacity_${Date.now()}_${process.pid}`;
    const adminKnex = knexFactory({ client: 'pg', connection: admin.toString(), pool: { min: 0, max: 1 } });
    await adminKnex.raw(`create database "${name}"`);
    await adminKnex.destroy();
    const own = new URL(admin.toString());
    own.pathname = `/${name}`;
    url = own.toString();
    drop = async () => {
      const dropper = knexFactory({ client: 'pg', connection: admin.toString(), pool: { min: 0, max: 1 } });
      await dropper.raw(`drop database if exists "${name}" with (force)`);
      await dropper.destroy();
    };
  } else {
    const pg = await services.startEmbeddedPostgres({ dataDir: path.join(ROOT, '.data', 'bench-postgres'), port: await services.freePort() });
    const name = `render_studio_capacity_${process.pid}`;
    await pg.ensureDatabase(name);
    url = `${pg.url}/${name}`;
    drop = async () => {
      const dropper = knexFactory({ client: 'pg', connection: `${pg.url}/postgres`, pool: { min: 0, max: 1 } });
      await dropper.raw(`drop database if exists "${name}" with (force)`);
      await dropper.destroy();
      await pg.stop();
    };
  }
  const r = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['db/migrate.ts', 'latest'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: url }, stdio: 'inherit' });
  if (r.status !== 0) {
    await drop();
    throw new Error('migrations failed');
  }
  return { url, drop };
}

/** Worker processes alive now (an interrupted run kills them). */
const runningWorkers = new Set<ChildProcess>();
/** the workers' CPU limit groups, removed when a run ends or is interrupted */
const cpuLimits = new Set<CpuLimit>();

interface BenchWorker {
  child: ChildProcess;
  pid: number;
  temporalMetricsUrl: string;
  cpuLimit: CpuLimit | null;
}

/** The real worker entry in a node process of its own (no tsx wrapper: /proc shows its own RSS and CPU). */
async function startWorker(env: Record<string, string>, index: number): Promise<BenchWorker> {
  const temporalMetricsPort = await services.freePort();
  const child = spawn(process.execPath, [...profileArgs(`worker-${index}`), '--import', 'tsx', 'workers/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, TEMPORAL_METRICS_PORT: String(temporalMetricsPort), SERVICE_NAME: `capacity-worker-${index}`, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // limited from its first moments, so its start-up and every ffmpeg it runs count against the quota
  let cpuLimit: CpuLimit | null = null;
  if (WORKER_CPUS !== null) {
    try {
      cpuLimit = limitCpu(child.pid as number, WORKER_CPUS, `worker-${index}`);
      cpuLimits.add(cpuLimit);
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
  }
  // the worker logs "worker running" at info; at warn it says nothing, so readiness is its metrics port answering
  // and its pollers registered (the SDK's exporter starts with Runtime.install, before the workers are created)
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const deadline = Date.now() + Number(process.env.BENCH_WORKER_START_MS ?? 300_000);
  const metricsUrl = `http://127.0.0.1:${temporalMetricsPort}/metrics`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`worker ${index} exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`worker ${index} did not start in time:\n${output}`);
    const text = await fetch(metricsUrl).then((r) => (r.ok ? r.text() : ''), () => '');
    // the slot gauges appear once the queues' workers are polling
    if (metricSum(parsePrometheus(text), 'temporal_worker_task_slots_available', { task_queue: defaultClipQueues().generation }) > 0) break;
    await sleep(1000);
  }
  runningWorkers.add(child);
  child.once('exit', () => runningWorkers.delete(child));
  return { child, pid: child.pid as number, temporalMetricsUrl: metricsUrl, cpuLimit };
}

/**
 * utime + stime of the worker process, and of everything below it (the media launcher helper and the ffmpeg and
 * ffprobe runs it started, running or reaped), in seconds.
 */
function cpuWithChildren(pid: number): { self: number; children: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const self = (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  return { self, children: Math.max(0, (treeCpuSeconds(pid) ?? self) - self) };
}

interface RunResult {
  workers: number;
  jobs: number;
  started: number;
  startFailures: string[];
  /** starts that answered 503 or 409 at least once before they were admitted (pressed again) */
  startsPressedAgain: number;
  /** 503 answers in all (admission waits over 20 s) */
  startRefusals: number;
  startSeconds: number;
  /** most clips admitted and not yet final at one moment (sampled every 2 s) */
  peakInFlight: number;
  completed: number;
  failed: number;
  throughputPerMin: number;
  wallSeconds: number;
  meanJobSeconds: number;
  meanProviderSeconds: number;
  idleRssMb: number[];
  peakRssMb: number[];
  rssPerJobKb: number;
  cpuSecondsPerJob: number;
  /** of which below the worker: the media launcher and its ffmpeg and ffprobe runs */
  childCpuSecondsPerJob: number;
  slotsPeak: Array<[string, number]>;
  stickyCachePeak: number;
  activityScheduleToStart: Spread;
  workflowTaskScheduleToStart: Spread;
  sdkActivityScheduleToStartMeanMs: number;
  sdkWorkflowTaskScheduleToStartMeanMs: number;
  historyLength: Spread;
  /** per activity type: total ms per clip (scheduled to completed, summed over its runs), mean over the sample */
  stepMsPerClip: Array<[string, number]>;
  tasksByWorker: Record<string, number>;
  chargedOnce: number;
  chargeProblems: string[];
  statusPolls: number;
  /** the machine's 1-minute load average at the start and at the end of the wait (other processes count too) */
  loadAverage: [number, number];
  /** CPU seconds the workers' quota held them back, all workers (0 without CAPACITY_WORKER_CPUS) */
  throttledSeconds: number;
}

async function run(workerCount: number, ctx: { knex: Knex; storage: Storage; client: Client; fal: FakeFal; env: Record<string, string> }): Promise<RunResult> {
  const { knex, storage, client, fal } = ctx;
  const jobs = JOBS;
  log(`run with ${workerCount} worker(s): making ${jobs} accounts`);
  const accounts = await createCapacityAccounts(knex, storage, jobs, CREDIT_COST.clip + 1, `w${workerCount}`);

  log(`starting ${workerCount} worker process(es)`);
  const workers = await Promise.all(Array.from({ length: workerCount }, (_, i) => startWorker(ctx.env, i)));
  try {
    await sleep(5000);
    const idleKb = workers.map((w) => rssKb(w.pid));
    const cpuBefore = workers.map((w) => cpuWithChildren(w.pid));
    const peakKb = [...idleKb];
    const slots = new PeakTracker();
    let stickyPeak = 0;
    const sampleRss = setInterval(() => {
      workers.forEach((w, i) => {
        try {
          peakKb[i] = Math.max(peakKb[i], rssKb(w.pid));
        } catch {
          // a worker that died: the run fails on its jobs
        }
      });
    }, 1000);
    let lastScrape: string[] = workers.map(() => '');
    const scrape = async () => {
      const texts = await Promise.all(workers.map((w) => fetch(w.temporalMetricsUrl).then((r) => r.text(), () => '')));
      lastScrape = texts.map((t, i) => t || lastScrape[i]);
      let sticky = 0;
      for (const text of texts) {
        const samples = parsePrometheus(text);
        for (const s of samples.filter((x) => x.name === 'temporal_worker_task_slots_used')) {
          slots.see(`${s.labels.task_queue} ${s.labels.worker_type} (worker ${texts.indexOf(text)})`, s.value);
        }
        sticky += metricSum(samples, 'temporal_sticky_cache_size');
      }
      stickyPeak = Math.max(stickyPeak, sticky);
    };
    const scraper = setInterval(() => void scrape(), 2000);
    // clips in flight (admitted, not final) over the run, its own accounts only
    let peakInFlight = 0;
    const accountIds = accounts.map((a) => a.userId);
    const inFlight = setInterval(() => {
      knex('video_generation_jobs')
        .whereIn('workspace_id', accountIds)
        .whereIn('status', ['pending', 'processing'])
        .count({ n: '*' })
        .first()
        .then((row) => {
          peakInFlight = Math.max(peakInFlight, Number((row as { n: string } | undefined)?.n ?? 0));
        }, () => undefined);
    }, 2000);

    const videos = new VideoGenerationService({ knex, client: async () => client, queues: defaultClipQueues() });
    const jobIds: Array<string | null> = accounts.map(() => null);
    const startFailures: string[] = [];
    let startRefusals = 0;
    let startsPressedAgain = 0;
    const falJobsBefore = fal.jobs.length;
    const pollsBefore = fal.statusPolls();
    log(`starting ${jobs} clips (${START_CONCURRENCY} start calls at a time)`);
    const loadAtStart = os.loadavg()[0];
    const t0 = Date.now();
    await eachLimited(accounts, START_CONCURRENCY, async (account: CapacityAccount, i) => {
      const platform = PLATFORMS[i % PLATFORMS.length];
      let refusedSince: number | null = null;
      for (;;) {
        try {
          const answer = await videos.start(account.userId, {
            projectId: account.projectId,
            renderId: account.renderId,
            effect: VIDEO_EFFECTS[i % VIDEO_EFFECTS.length],
            platform,
            aspectRatio: aspectForPlatform(platform),
            durationSeconds: 5,
            prompt: null,
            isTemporaryImage: false,
            startedBy: 'start',
          });
          jobIds[i] = answer.jobId;
          if (refusedSince !== null) startsPressedAgain += 1;
          return;
        } catch (err) {
          const status = (err as { status?: number }).status;
          if (status === 503) startRefusals += 1;
          // a 409 only follows a 503 here (each account starts one clip): the cancelled attempt's row not yet closed
          const pressAgain = status === 503 || (status === 409 && refusedSince !== null);
          if (pressAgain && Date.now() - (refusedSince ??= Date.now()) < START_PRESS_WINDOW_MS) {
            await sleep(START_RETRY_PAUSE_MS);
            continue;
          }
          startFailures.push(`${account.userId}: ${status ?? ''} ${(err as Error).message}`);
          return;
        }
      }
    });
    const startSeconds = (Date.now() - t0) / 1000;
    const started = jobIds.filter((id): id is string => id !== null);
    log(`${started.length} started in ${startSeconds.toFixed(1)} s${startFailures.length ? `, ${startFailures.length} refused or failed` : ''}`);

    // until every started clip is final; the longest wait plus a generous margin for the rest of its work
    const waitLimit = Date.now() + CLIP_MS[1] + 40 * 60_000;
    let counts: Record<string, number> = {};
    let lastLine = '';
    for (;;) {
      const rows = (await knex('video_generation_jobs').whereIn('id', started).groupBy('status').select('status').count({ n: '*' })) as Array<{ status: string; n: string }>;
      counts = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
      const final = (counts.completed ?? 0) + (counts.failed ?? 0) + (counts.cancelled ?? 0);
      const line = Object.entries(counts).map(([s, n]) => `${s} ${n}`).join(', ');
      if (line !== lastLine) {
        log(`clips: ${line}; RSS ${workers.map((w, i) => `${(peakKb[i] / 1024).toFixed(0)} MB`).join(' / ')} at peak`);
        lastLine = line;
      }
      if (final >= started.length || Date.now() > waitLimit) break;
      await sleep(2000);
    }
    const loadAtEnd = os.loadavg()[0];
    clearInterval(sampleRss);
    clearInterval(scraper);
    clearInterval(inFlight);
    await scrape();
    const cpuAfter = workers.map((w) => cpuWithChildren(w.pid));
    const throttledSeconds = workers.reduce((a, w) => a + (w.cpuLimit?.throttledSeconds() ?? 0), 0);

    const timing = (await knex('video_generation_jobs')
      .whereIn('id', started)
      .where({ status: 'completed' })
      .select(knex.raw('extract(epoch from max(updated_at)) * 1000 as last_done'), knex.raw('avg(extract(epoch from (updated_at - created_at))) as mean_job_s'))
      .first()) as { last_done: string | null; mean_job_s: string | null };
    const completed = counts.completed ?? 0;
    const lastDone = Number(timing.last_done ?? t0);
    const runJobs = fal.jobs.slice(falJobsBefore);
    const meanProviderMs = runJobs.reduce((a, j) => a + (j.durationMs ?? 0), 0) / Math.max(1, runJobs.length);

    // a sample of histories, spread over the start order
    const sample = started.filter((_, i) => i % Math.max(1, Math.floor(started.length / HISTORY_SAMPLE)) === 0).slice(0, HISTORY_SAMPLE);
    const lengths: number[] = [];
    const activityMs: number[] = [];
    const wftMs: number[] = [];
    const tasksByWorker: Record<string, number> = {};
    const stepTotals: Record<string, number> = {};
    for (const jobId of sample) {
      const history = await client.workflow.getHandle(clipWorkflowId(jobId)).fetchHistory();
      const events = (history.events ?? []).map((e) => flattenEvent(e as Parameters<typeof flattenEvent>[0]));
      lengths.push(events.length);
      const s2s = scheduleToStart(events);
      activityMs.push(...s2s.activityMs);
      wftMs.push(...s2s.workflowTaskMs);
      for (const [who, n] of Object.entries(s2s.tasksByWorker)) tasksByWorker[who] = (tasksByWorker[who] ?? 0) + n;
      for (const [type, durations] of Object.entries(activityDurations(events))) stepTotals[type] = (stepTotals[type] ?? 0) + durations.reduce((a, b) => a + b, 0);
    }
    const sdkMean = (name: string) => {
      const all = lastScrape.map(parsePrometheus);
      const sum = all.reduce((a, s) => a + metricSum(s, `${name}_sum`), 0);
      const count = all.reduce((a, s) => a + metricSum(s, `${name}_count`), 0);
      return count > 0 ? (sum / count) * 1000 : 0;
    };

    // the charge: approve every clip as its user would (the approve route's service)
    log(`approving ${completed} clips`);
    const approvals = new ApprovalService({ knex, storage, temporal: async () => client });
    const pending = (await knex('pending_approvals').whereIn('source_job_id', started).select('id', 'workspace_id')) as Array<{ id: string; workspace_id: string }>;
    const approveFailures: string[] = [];
    await eachLimited(pending, 20, async (p) => {
      try {
        await approvals.approve(p.workspace_id, p.id);
      } catch (err) {
        approveFailures.push(`${p.workspace_id}: approve ${(err as Error).message}`);
      }
    });
    const runAccounts = accounts.map((a) => a.userId);
    const consumeRows = (await knex('credit_transactions').whereIn('workspace_id', runAccounts).where({ transaction_type: 'consume' }).select('workspace_id', 'amount')) as Array<{ workspace_id: string; amount: number }>;
    const consumes = new Map<string, number[]>();
    for (const r of consumeRows) consumes.set(r.workspace_id, [...(consumes.get(r.workspace_id) ?? []), Number(r.amount)]);
    const invariants = new Map<string, { ok: boolean; balance: number; ledgerSum: number; reserved: number }>();
    await eachLimited(runAccounts, 8, async (id) => {
      invariants.set(id, await checkLedgerInvariant(knex, id));
    });
    const charges = checkCharges(runAccounts, consumes, invariants, CREDIT_COST.clip);

    const childSeconds = cpuAfter.reduce((a, c, i) => a + c.children - cpuBefore[i].children, 0);
    const cpuSeconds = cpuAfter.reduce((a, c, i) => a + c.self - cpuBefore[i].self, 0) + childSeconds;
    return {
      workers: workerCount,
      jobs,
      started: started.length,
      startFailures,
      startsPressedAgain,
      startRefusals,
      startSeconds,
      peakInFlight,
      completed,
      failed: started.length - completed,
      throughputPerMin: throughputPerMinute(completed, t0, lastDone),
      wallSeconds: (lastDone - t0) / 1000,
      meanJobSeconds: Number(timing.mean_job_s ?? 0),
      meanProviderSeconds: meanProviderMs / 1000,
      idleRssMb: idleKb.map((k) => k / 1024),
      peakRssMb: peakKb.map((k) => k / 1024),
      rssPerJobKb: rssPerJobKb(idleKb, peakKb, Math.max(1, peakInFlight)),
      cpuSecondsPerJob: cpuSeconds / Math.max(1, started.length),
      childCpuSecondsPerJob: childSeconds / Math.max(1, started.length),
      slotsPeak: slots.entries(),
      stickyCachePeak: stickyPeak,
      activityScheduleToStart: spread(activityMs),
      workflowTaskScheduleToStart: spread(wftMs),
      sdkActivityScheduleToStartMeanMs: sdkMean('temporal_activity_schedule_to_start_latency_seconds'),
      sdkWorkflowTaskScheduleToStartMeanMs: sdkMean('temporal_workflow_task_schedule_to_start_latency_seconds'),
      historyLength: spread(lengths),
      stepMsPerClip: Object.entries(stepTotals).map(([type, total]): [string, number] => [type, total / Math.max(1, sample.length)]).sort((a, b) => b[1] - a[1]),
      tasksByWorker,
      chargedOnce: charges.chargedOnce,
      chargeProblems: [...approveFailures, ...charges.problems],
      statusPolls: fal.statusPolls() - pollsBefore,
      loadAverage: [loadAtStart, loadAtEnd],
      throttledSeconds,
    };
  } finally {
    await Promise.all(workers.map((w) => stopProcess(w.child, 20_000)));
    for (const w of workers) {
      w.cpuLimit?.release();
      if (w.cpuLimit) cpuLimits.delete(w.cpuLimit);
    }
  }
}

function printRun(r: RunResult): void {
  const ms = (s: Spread) => `p50 ${s.p50.toFixed(0)} ms, p95 ${s.p95.toFixed(0)} ms, max ${s.max.toFixed(0)} ms (${s.count} tasks)`;
  const out = [
    '',
    `--- ${r.workers} worker process(es)${WORKER_CPUS !== null ? ` limited to ${WORKER_CPUS} CPU each` : ''}, ${r.jobs} clips in flight at once ---`,
    `started: ${r.started}/${r.jobs} in ${r.startSeconds.toFixed(1)} s (${START_CONCURRENCY} start calls at a time; ${r.startRefusals} answers 503 after a 20 s admission wait; ${r.startsPressedAgain} started after more than one press)${r.startFailures.length ? `; not started: ${r.startFailures.slice(0, 5).join('; ')}` : ''}`,
    `completed: ${r.completed}/${r.started}  (failed or cancelled: ${r.failed}); most in flight at one moment: ${r.peakInFlight}`,
    `machine load average (1 min, ${os.cpus().length} cores, every process on it): ${r.loadAverage[0].toFixed(1)} at the start, ${r.loadAverage[1].toFixed(1)} at the end`,
    `wall time, first start to last completion: ${r.wallSeconds.toFixed(1)} s; throughput ${r.throughputPerMin.toFixed(1)} clips/min`,
    `mean clip: ${r.meanJobSeconds.toFixed(1)} s start to completion, of which the provider's wait ${r.meanProviderSeconds.toFixed(1)} s (${(waitShare(r.meanProviderSeconds, r.meanJobSeconds) * 100).toFixed(0)} %)`,
    `worker RSS: idle ${r.idleRssMb.map((m) => m.toFixed(0)).join(' / ')} MB, peak ${r.peakRssMb.map((m) => m.toFixed(0)).join(' / ')} MB -> ${r.rssPerJobKb.toFixed(0)} KB per in-flight clip`,
    `worker CPU: ${r.cpuSecondsPerJob.toFixed(2)} s per clip, of which ${r.childCpuSecondsPerJob.toFixed(2)} s in its ffmpeg/ffprobe runs and their launcher${WORKER_CPUS !== null ? `; held back by the CPU limit ${r.throttledSeconds.toFixed(0)} s in all` : ''}`,
    `activity slots used at peak (queues that ran any):`,
    ...r.slotsPeak.filter(([k, v]) => k.includes(' ActivityWorker') && v > 0).map(([k, v]) => `  ${k}: ${v}`),
    `workflow cache (sticky) at peak, all queues and workers: ${r.stickyCachePeak}`,
    `schedule-to-start (sampled histories): activities ${ms(r.activityScheduleToStart)}; workflow tasks ${ms(r.workflowTaskScheduleToStart)}`,
    `schedule-to-start (SDK histogram means over the run): activities ${r.sdkActivityScheduleToStartMeanMs.toFixed(0)} ms, workflow tasks ${r.sdkWorkflowTaskScheduleToStartMeanMs.toFixed(0)} ms`,
    `history length per clip run (${r.historyLength.count} sampled): mean ${r.historyLength.mean.toFixed(0)}, max ${r.historyLength.max} events`,
    `time per clip in each activity, scheduled to completed (sampled): ${r.stepMsPerClip.map(([t, ms]) => `${t} ${(ms / 1000).toFixed(1)} s`).join(', ')}`,
    `tasks per worker in the sampled histories: ${Object.entries(r.tasksByWorker).map(([w, n]) => `${w} ${n}`).join(', ')}`,
    `provider status polls: ${r.statusPolls} (${(r.statusPolls / Math.max(1, r.started)).toFixed(1)} per clip)`,
    `charged exactly once (one ${CREDIT_COST.clip}-credit consume row, balance = ledger sum): ${r.chargedOnce}/${r.jobs}`,
    ...r.chargeProblems.slice(0, 10).map((p) => `  ${p}`),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

async function main(): Promise<void> {
  const storageDir = path.join(ROOT, '.data', `bench-capacity-${process.pid}`);
  log(`capacity bench: ${JOBS} clips in flight at once, runs on ${WORKER_COUNTS.join(' then ')} worker(s)${WORKER_CPUS !== null ? ` of ${WORKER_CPUS} CPU each` : ''}, clips ${CLIP_MS[0] / 1000}-${CLIP_MS[1] / 1000} s, images ${IMAGE_MS[0] / 1000}-${IMAGE_MS[1] / 1000} s, seed ${SEED}`);
  const db = await ownDatabase();
  let temporal: Awaited<ReturnType<ServicesModule['startTemporalDevServer']>> | null = null;
  let fal: FakeFal | null = null;
  let connection: Connection | null = null;
  let receiver: { baseUrl: string; close: () => Promise<void> } | null = null;
  const knex = connectDatabase(db.url, { min: 0, max: 20 });
  // an interrupted run stops its workers and servers and drops its database too
  const interrupted = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping`);
    for (const child of runningWorkers) child.kill('SIGKILL');
    for (const limit of cpuLimits) limit.release();
    void Promise.allSettled([connection?.close(), fal?.close(), temporal?.stop(), receiver?.close()])
      .then(() => knex.destroy())
      .then(() => db.drop())
      .finally(() => {
        fs.rmSync(storageDir, { recursive: true, force: true });
        process.exit(130);
      });
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    temporal = await services.startTemporalDevServer({ cli: tools.ensureTemporalCli(), port: await services.freePort() });
    fal = await startFakeFal({
      apiKey: FAL_KEY,
      models: {
        [VIDEO_MODEL]: { kind: 'video', behaviour: 'succeed' },
        'fal-ai/nano-banana/edit': { kind: 'image-edit', behaviour: 'succeed' },
        'fal-ai/esrgan': { kind: 'upscale', behaviour: 'succeed' },
        'fal-ai/any-llm/vision': { kind: 'vision-llm', behaviour: 'succeed' },
      },
      latency: { clipMs: CLIP_MS, imageMs: IMAGE_MS, seed: SEED },
      video: { width: VIDEO_W, height: VIDEO_H, seconds: VIDEO_S },
      keepVideoInputs: false,
      quiet: true,
    });
    const env: Record<string, string> = {
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: temporal.address,
      STORAGE_BACKEND: 'local',
      STORAGE_DIR: storageDir,
      AI_PROVIDER: 'fal',
      FAL_BASE_URL: fal.baseUrl,
      FAL_KEY,
      FAL_VIDEO_MODEL: VIDEO_MODEL,
    };
    if (CALLBACKS) {
      receiver = await startCallbackReceiver({ ...env, FAL_WEBHOOK_JWKS_URL: fal.jwksUrl }, knex);
      env.FAL_WEBHOOK_BASE_URL = receiver.baseUrl;
    }
    const storage = createStorage({ storageDir, signingSecret: process.env.SIGNING_SECRET as string, signedUrlTtlSeconds: 3600, storageBackend: 'local' });
    connection = await Connection.connect({ address: temporal.address });
    const client = new Client({ connection });

    const results: RunResult[] = [];
    for (const workers of WORKER_COUNTS) {
      const result = await run(workers, { knex, storage, client, fal, env });
      printRun(result);
      results.push(result);
    }

    const one = results.find((r) => r.workers === 1);
    const two = results.find((r) => r.workers === 2);
    const scaling = one && two && one.throughputPerMin > 0 ? two.throughputPerMin / one.throughputPerMin : null;
    const targets: Target[] = [];
    for (const r of results) {
      targets.push({ name: `${r.workers} worker(s): clips completed`, value: `${r.completed}/${r.jobs}`, target: `${r.jobs}/${r.jobs}`, met: r.completed === r.jobs });
      targets.push({ name: `${r.workers} worker(s): charged exactly once`, value: `${r.chargedOnce}/${r.jobs}`, target: `${r.jobs}/${r.jobs}`, met: r.chargedOnce === r.jobs });
      targets.push({ name: `${r.workers} worker(s): history length per clip (mean)`, value: r.historyLength.mean.toFixed(0), target: `<= ${TARGET_HISTORY_LENGTH}`, met: r.historyLength.mean <= TARGET_HISTORY_LENGTH });
      targets.push({ name: `${r.workers} worker(s): worker CPU per clip, with its ffmpeg/ffprobe`, value: `${r.cpuSecondsPerJob.toFixed(2)} s`, target: `<= ${TARGET_CPU_PER_CLIP} s`, met: r.cpuSecondsPerJob <= TARGET_CPU_PER_CLIP });
      // not a target: the worker process's own share, for comparison (docs/benchmarks.md)
      targets.push({ name: `${r.workers} worker(s): worker process's own CPU per clip (no children)`, value: `${(r.cpuSecondsPerJob - r.childCpuSecondsPerJob).toFixed(2)} s`, target: `<= ${TARGET_CPU_PER_CLIP} s`, met: r.cpuSecondsPerJob - r.childCpuSecondsPerJob <= TARGET_CPU_PER_CLIP });
    }
    if (scaling !== null) targets.push({ name: 'throughput, two workers over one', value: `${scaling.toFixed(2)}x`, target: `>= ${TARGET_RATIO}x`, met: scaling >= TARGET_RATIO });
    process.stdout.write(`\ntargets:\n${targets.map(targetLine).join('\n')}\n`);

    const measures: BenchMeasure[] = [];
    // the rows say under which limit they were measured: a run held to a CPU limit per worker is another experiment
    const limited = WORKER_CPUS !== null ? `, each worker held to ${WORKER_CPUS} CPU` : '';
    for (const r of results) {
      const k = `w${r.workers}`;
      measures.push(
        ratio(`${k}_completed_share`, r.completed / r.jobs, 'higher', `clips completed of those started at once on ${r.workers} worker(s)${limited}`),
        ratio(`${k}_charged_once_share`, r.chargedOnce / r.jobs, 'higher', 'accounts charged exactly once, ledger adding up'),
        figure(`${k}_throughput`, r.throughputPerMin, 'clips/min', 'higher', `completed clips per minute, first start to last completion${limited}`),
        figure(`${k}_rss_per_job`, r.rssPerJobKb, 'KB', 'lower', 'worker RSS at peak minus idle, per in-flight clip'),
        figure(`${k}_cpu_per_job`, r.cpuSecondsPerJob, 's', 'lower', 'worker CPU (with its ffmpeg runs) per clip'),
        figure(`${k}_own_cpu_per_job`, r.cpuSecondsPerJob - r.childCpuSecondsPerJob, 's', 'lower', "the worker process's own CPU per clip (without its ffmpeg/ffprobe children)"),
        figure(`${k}_activity_s2s_p95`, r.activityScheduleToStart.p95, 'ms', 'lower', 'activity schedule-to-start p95 (sampled histories)'),
        figure(`${k}_history_length`, r.historyLength.mean, 'events', 'lower', 'mean history length of a clip run (sampled)'),
      );
    }
    if (scaling !== null) measures.push(ratio('two_over_one_throughput', scaling, 'higher', `throughput of two workers over one, the same clips${limited}`, TARGET_RATIO));
    recordResults('capacity', measures);
    if (targets.some((t) => !t.met)) process.exitCode = 1;
  } finally {
    await receiver?.close();
    await closeTemporalClient();
    await connection?.close();
    await knex.destroy();
    await fal?.close();
    await temporal?.stop();
    await db.drop();
    fs.rmSync(storageDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
