/**
 * What a benchmark needs around it: a migrated database (DATABASE_URL, else an embedded PostgreSQL in
 * .data/bench-postgres) with throw-away users, the API in its own process (support/appServer.ts), so load
 * generator and server do not share an event loop, and for workflow benches a Temporal dev server of its own
 * and the real worker entry.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { connectDatabase } from '../../db/connection';
import { signUp } from '../../services/accounts/accounts';

export const ROOT = path.resolve(__dirname, '..', '..');

// SIGNING_SECRET has no built-in value: like the tests, a bench signs file links with a random key of its own run
// (inherited by the API and worker it starts) unless one is set
process.env.SIGNING_SECRET ||= randomBytes(32).toString('hex');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');

// plain CommonJS modules without type declarations: the parts used here, typed
interface EmbeddedPostgres {
  url: string;
  ensureDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
}
interface TemporalDevServer {
  address: string;
  pid: number;
  stop(): Promise<void>;
}
interface ServicesModule {
  freePort(): Promise<number>;
  startEmbeddedPostgres(opts: { dataDir: string; port: number }): Promise<EmbeddedPostgres>;
  startTemporalDevServer(opts: { cli: string; port: number; logFile?: string }): Promise<TemporalDevServer>;
}
interface ToolsModule {
  ensureTemporalCli(): string;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as ServicesModule;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools') as ToolsModule;

async function benchDatabase(): Promise<{ url: string; stop: (() => Promise<void>) | null }> {
  let db: { url: string; stop: (() => Promise<void>) | null };
  if (process.env.DATABASE_URL) db = { url: process.env.DATABASE_URL, stop: null };
  else {
    const pg = await services.startEmbeddedPostgres({ dataDir: path.join(ROOT, '.data', 'bench-postgres'), port: await services.freePort() });
    await pg.ensureDatabase('render_studio_bench');
    db = { url: `${pg.url}/render_studio_bench`, stop: pg.stop };
  }
  const r = spawnSync(TSX, ['db/migrate.ts', 'latest'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: db.url }, stdio: 'inherit' });
  if (r.status !== 0) {
    if (db.stop) await db.stop();
    throw new Error('migrations failed');
  }
  return db;
}

export interface BenchUser {
  userId: string;
  token: string;
}

export interface BenchDatabase {
  url: string;
  knex: Knex;
  /** A new user with a one-day session, deleted (with all they own) when the bench ends. */
  signUpUser(name: string): Promise<BenchUser>;
}

/** Runs `bench` against the migrated bench database, then deletes its users and closes the database. */
export async function withBenchDatabase<T>(pool: { max: number }, bench: (db: BenchDatabase) => Promise<T>): Promise<T> {
  const db = await benchDatabase();
  const knex = connectDatabase(db.url, { min: 0, max: pool.max });
  const userIds: string[] = [];
  const signUpUser = async (name: string): Promise<BenchUser> => {
    const { user, session } = await signUp(knex, { name, email: `bench-${randomUUID()}@example.test`, password: `bench-${randomUUID()}-1` }, { sessionTtlDays: 1 });
    userIds.push(user.id);
    return { userId: user.id, token: session.token };
  };
  try {
    return await bench({ url: db.url, knex, signUpUser });
  } finally {
    if (userIds.length) await knex('users').whereIn('id', userIds).delete();
    await knex.destroy();
    if (db.stop) await db.stop();
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export function stopProcess(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), graceMs).unref();
  });
}

/** Resolves with `ready(stdout so far)` once it is defined; rejects when the process exits first or after `timeoutMs`. */
function waitForOutput<T>(child: ChildProcess, what: string, timeoutMs: number, ready: (out: string) => T | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let out = '';
    const settle = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      // keep the pipe drained: the rest of the output is not read
      child.stdout?.resume();
    };
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const value = ready(out);
      if (value !== undefined) {
        settle();
        resolve(value);
      }
    };
    const onExit = (code: number | null): void => {
      settle();
      reject(new Error(`${what} exited with ${code} before it was ready:\n${out}`));
    };
    const timer = setTimeout(() => {
      settle();
      reject(new Error(`${what} did not start within ${timeoutMs / 1000} s:\n${out}`));
    }, timeoutMs);
    child.stdout?.on('data', onData);
    child.once('exit', onExit);
  });
}

export interface BenchProcess {
  child: ChildProcess;
  stop: () => Promise<void>;
}

export interface BenchApi extends BenchProcess {
  baseUrl: string;
}

/**
 * BENCH_PROFILE=<dir>: the API and worker processes run with Node's --cpu-prof, writing <dir>/<role>/*.cpuprofile when
 * they exit (open in Chrome DevTools or summarise with `node scripts/profileTop.js <file>`).
 */
export function profileArgs(role: string): string[] {
  const dir = process.env.BENCH_PROFILE;
  if (!dir) return [];
  const roleDir = path.resolve(dir, role);
  fs.mkdirSync(roleDir, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${roleDir}`];
}

export async function startBenchApi(databaseUrl: string, env: Record<string, string> = {}): Promise<BenchApi> {
  // node itself with tsx's loader (not the tsx wrapper), so /proc and --cpu-prof see the API process
  const child = spawn(process.execPath, [...profileArgs('api'), '--import', 'tsx', path.join(__dirname, 'appServer.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // generous: on a loaded machine tsx compiling the app alone can take a minute
  const port = await waitForOutput(child, 'API', Number(process.env.BENCH_API_START_MS ?? 180_000), (out) => {
    const m = /LISTENING (\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  });
  return { baseUrl: `http://127.0.0.1:${port}`, child, stop: () => stopProcess(child, 5000) };
}

/** A Temporal dev server of the bench's own, on a free port. */
async function startBenchTemporal(): Promise<TemporalDevServer> {
  return services.startTemporalDevServer({ cli: tools.ensureTemporalCli(), port: await services.freePort() });
}

/**
 * The real worker entry (workers/main.ts) polling the default task queues, in a single node process (no tsx
 * wrapper), so /proc shows its own CPU time and its ffmpeg children's.
 */
async function startBenchWorker(env: Record<string, string>): Promise<BenchProcess> {
  const child = spawn(process.execPath, [...profileArgs('worker'), '--import', 'tsx', 'workers/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // the worker bundles the workflow code first: on a loaded machine that takes minutes (BENCH_WORKER_START_MS)
  await waitForOutput(child, 'worker', Number(process.env.BENCH_WORKER_START_MS ?? 240_000), (out) => (out.includes('worker running') ? true : undefined));
  return { child, stop: () => stopProcess(child, 15_000) };
}

export interface WorkflowStack {
  api: BenchApi;
  worker: BenchProcess;
  /** The API's and the worker's STORAGE_DIR. */
  storageDir: string;
  /** The stack's own Temporal dev server (host:port) and its process id. */
  temporalAddress: string;
  temporalPid: number;
}

/**
 * Runs `bench` with what a workflow needs: a Temporal dev server of its own, the API and the real worker on it
 * with the local provider and a storage folder of their own (`env` adds to or overrides their environment).
 * Stops all three and removes the storage folder afterwards; stopping the API or worker early is fine.
 */
export async function withWorkflowStack<T>(databaseUrl: string, env: Record<string, string>, bench: (stack: WorkflowStack) => Promise<T>): Promise<T> {
  const storageDir = path.join(ROOT, '.data', `bench-storage-${process.pid}`);
  let temporal: TemporalDevServer | null = null;
  let api: BenchApi | null = null;
  let worker: BenchProcess | null = null;
  try {
    temporal = await startBenchTemporal();
    const stackEnv = { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal.address, STORAGE_DIR: storageDir, AI_PROVIDER: 'local', ...env };
    const [apiStart, workerStart] = await Promise.allSettled([startBenchApi(databaseUrl, stackEnv), startBenchWorker(stackEnv)]);
    if (apiStart.status === 'fulfilled') api = apiStart.value;
    if (workerStart.status === 'fulfilled') worker = workerStart.value;
    if (apiStart.status === 'rejected') throw apiStart.reason;
    if (workerStart.status === 'rejected') throw workerStart.reason;
    return await bench({ api: api as BenchApi, worker: worker as BenchProcess, storageDir, temporalAddress: temporal.address, temporalPid: temporal.pid });
  } finally {
    if (worker) await worker.stop();
    if (api) await api.stop();
    if (temporal) await temporal.stop();
    fs.rmSync(storageDir, { recursive: true, force: true });
  }
}
