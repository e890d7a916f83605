/**
 * The soak's stack (issue 28, items 2 and 3): the scaled-out topology of `npm run start:scaled` (scripts/scaleOut.js:
 * N APIs behind haproxy, M workers, S3 on SeaweedFS, under its supervisor) on a PostgreSQL and a Temporal dev server
 * of the soak's own. Those two are started here, not by scaleOut.js, so that the chaos mode (bench/soak/chaos.ts) can
 * restart them in place: same data folder or history file, same port, while the APIs and workers keep running and
 * reconnect. Everything lives in `.data/soak` (wiped at each start, so runs are comparable) on ports chosen free at
 * start, apart from the machine's 5432/7233 and the tests'; PostgreSQL's data folder may have to live elsewhere (out
 * of a mode-700 clone), so its database is also dropped and created empty at each start.
 *
 * The supervised children's pids are read from /proc (the scaleOut process's children, named by their SERVICE_NAME),
 * so a child restarted after a kill is found under its new pid.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface SoakProcess {
  /** the supervisor's name: api-1, worker-2 ... */
  name: string;
  kind: 'api' | 'worker';
  pid: number;
  /** where its Prometheus metrics are read: the API's own port (/metrics), the worker's WORKER_METRICS_PORT */
  metricsUrl: string;
  /** the worker's Temporal SDK exporter (TEMPORAL_METRICS_PORT); none for an API */
  temporalMetricsUrl?: string;
}

/** The handle the soak (bench/soak.ts) and the chaos mode (bench/soak/chaos.ts) work with. */
export interface SoakTopology {
  /** haproxy's public address, e.g. http://127.0.0.1:40123 */
  baseUrl: string;
  /** the API and worker processes running now (a killed one is missing until the supervisor has restarted it) */
  processes(): SoakProcess[];
  /** stops PostgreSQL (fast shutdown) and starts it again on the same data folder and port */
  restartPostgres(): Promise<void>;
  /** stops the Temporal dev server and starts it again on the same history file and port */
  restartTemporal(): Promise<void>;
  databaseUrl: string;
  temporalAddress: string;
  /** the storage settings, signing secret and access code the stack's processes run with (read from an API's environment) */
  storageEnv: Record<string, string>;
  /** the environment the APIs and workers were started with (secrets, access code ...) */
  env: Record<string, string>;
  /** where the stack's own output goes */
  logFile: string;
  /** the Temporal dev server's output, its Go runtime's gctrace lines included (its live heap: bench/soak/probes.ts) */
  temporalLogFile: string;
  /** the Temporal dev server's own Prometheus metrics (its history cache's fill: bench/soak/probes.ts) */
  temporalServerMetricsUrl: string;
  dataDir: string;
  /** PostgreSQL's data folder: `<dataDir>/postgres`, or where it had to live (see scripts/lib/services.js placeCluster) */
  postgresDataDir: string;
  /** the pids of PostgreSQL's postmaster, the Temporal dev server and the scaleOut.js process (parent of APIs, workers, haproxy, SeaweedFS) */
  servicePids(): { postgres: number | null; temporal: number | null; stack: number | null };
  stop(): Promise<void>;
}

export interface SoakTopologyOptions {
  apis?: number;
  workers?: number;
  /** default .data/soak */
  dataDir?: string;
  log?: (line: string) => void;
  /** extra environment for the APIs and workers */
  env?: Record<string, string>;
}

// plain CommonJS modules without type declarations: the parts used here, typed
interface ServerHandle {
  pid: number;
  stop(): Promise<void>;
}
interface EmbeddedPostgres extends ServerHandle {
  url: string;
  /** where its data is: the folder asked for, or one the postgres user can reach when that one is out of its reach */
  dataDir: string;
}
interface TemporalDevServer extends ServerHandle {
  address: string;
}
interface ServicesModule {
  freePort(): Promise<number>;
  waitFor(check: () => Promise<boolean>, what: string, timeoutMs?: number): Promise<void>;
  startEmbeddedPostgres(opts: { dataDir: string; port: number; log?: (line: string) => void }): Promise<EmbeddedPostgres>;
  startTemporalDevServer(opts: { cli: string; port: number; uiPort?: number; dbFile?: string; logFile?: string; metricsPort?: number; dynamicConfig?: Record<string, number | string | boolean>; env?: NodeJS.ProcessEnv }): Promise<TemporalDevServer>;
}
interface ToolsModule {
  ensureTemporalCli(): string;
  ensureHaproxy(): string;
  ensureSeaweedfs(): string;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as ServicesModule;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools') as ToolsModule;

const DATABASE = 'render_studio';

/** The direct children of `pid` (Linux /proc). */
export function childPids(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** One variable of a process's environment (/proc/<pid>/environ), or null. */
export function environOf(pid: number, name: string): string | null {
  try {
    const entry = fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .find((e) => e.startsWith(`${name}=`));
    return entry ? entry.slice(name.length + 1) : null;
  } catch {
    return null;
  }
}

/**
 * The soak's dev server keeps at most this many workflows' state in its history cache. Its own bound is thousands of
 * workflows, each kept for an hour, so over a soak the cache only fills (about 17 KB of Go heap per workflow, some 60
 * workflows a minute here) and the dev server's RSS grows with it. Bounded this low, the cache is full before warm-up
 * ends and the RSS target measures leaks, not a cache filling; it is still several times the workflows open at once.
 */
export const SOAK_TEMPORAL_DYNAMIC_CONFIG: Readonly<Record<string, number | string | boolean>> = { 'history.hostLevelCacheMaxSize': 256 };

/**
 * The soak's dev server's dynamic config: SOAK_TEMPORAL_DYNAMIC_CONFIG, then `given` (BENCH_SOAK_TEMPORAL_CONFIG,
 * "key=value,...", values as JSON) over it.
 */
export function temporalDynamicConfig(given = ''): Record<string, number | string | boolean> {
  const config: Record<string, number | string | boolean> = { ...SOAK_TEMPORAL_DYNAMIC_CONFIG };
  for (const pair of given.split(',').filter(Boolean)) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    let value: unknown;
    try {
      value = JSON.parse(pair.slice(at + 1).trim());
    } catch {
      value = undefined;
    }
    if (at <= 0 || !key || !['number', 'string', 'boolean'].includes(typeof value)) {
      throw new Error(`BENCH_SOAK_TEMPORAL_CONFIG: "${pair}" is not key=value with a JSON number, string or boolean (e.g. history.hostLevelCacheMaxSize=512, history.cacheTTL="10m")`);
    }
    config[key] = value as number | string | boolean;
  }
  return config;
}

/** Starts the stack; resolves once haproxy has every API in rotation. */
export async function startSoakTopology(options: SoakTopologyOptions = {}): Promise<SoakTopology> {
  const log = options.log ?? ((line: string) => process.stdout.write(`[soak] ${line}\n`));
  const apis = options.apis ?? 2;
  const workers = options.workers ?? 2;
  const dataDir = path.resolve(ROOT, options.dataDir ?? path.join('.data', 'soak'));
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dataDir, 'temporal'), { recursive: true });
  const temporalCli = tools.ensureTemporalCli();
  tools.ensureHaproxy();
  tools.ensureSeaweedfs();

  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  try {
    const pgPort = await services.freePort();
    const pgDir = path.join(dataDir, 'postgres');
    let pg = await services.startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, log });
    log(`PostgreSQL on 127.0.0.1:${pgPort} (data in ${pg.dataDir}; database ${DATABASE} created empty)`);
    // the data folder may live outside .data/soak (the postgres user cannot enter a mode-700 clone: then it is under
    // a reachable home, kept across runs), so wiping .data/soak is not enough: the database itself starts empty
    await freshDatabase(pg.url, DATABASE);
    // slow statements: pg_stat_statements when the server can load it (the embedded build may lack it), else the log
    await configurePostgres(pg.url);
    await pg.stop();
    pg = await services.startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, log });
    stops.push(() => pg.stop());
    const databaseUrl = `${pg.url}/${DATABASE}`;

    const temporalPort = await services.freePort();
    const temporalDb = path.join(dataDir, 'temporal', 'temporal.db');
    const temporalLog = path.join(dataDir, 'temporal', 'server.log');
    const temporalServerMetricsPort = await services.freePort();
    // gctrace=1: the Go runtime logs each collection with the heap it found live, which the memory readings report as
    // the dev server's heap beside its RSS (a Go process keeps freed memory mapped for a while)
    const temporalEnv = { ...process.env, GODEBUG: [process.env.GODEBUG, 'gctrace=1'].filter(Boolean).join(',') };
    const dynamicConfig = temporalDynamicConfig(process.env.BENCH_SOAK_TEMPORAL_CONFIG);
    const startTemporal = () => services.startTemporalDevServer({ cli: temporalCli, port: temporalPort, uiPort: 0, dbFile: temporalDb, logFile: temporalLog, metricsPort: temporalServerMetricsPort, dynamicConfig, env: temporalEnv });
    log(`Temporal dev server on 127.0.0.1:${temporalPort}`);
    let temporal = await startTemporal();
    stops.push(() => temporal.stop());

    const port = await services.freePort();
    const apiPorts: number[] = [];
    while (apiPorts.length < apis) {
      const p = await services.freePort();
      if (p !== port && !apiPorts.includes(p)) apiPorts.push(p);
    }
    const workerMetricsPort = await services.freePort();
    const temporalMetricsPort = await services.freePort();
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      PORT: String(port),
      AI_PROVIDER: 'local',
      CHAT_PROVIDER: 'local',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      // the soak serves no pages: the API answers its routes without a front-end build
      FRONTEND_DIST: process.env.FRONTEND_DIST ?? path.join(ROOT, 'frontend', 'dist'),
      WORKER_METRICS_PORT: String(workerMetricsPort),
      TEMPORAL_METRICS_PORT: String(temporalMetricsPort),
      ...options.env,
    };
    delete env.STORAGE_BACKEND;
    delete env.S3_ENDPOINT;
    const logFile = path.join(dataDir, 'stack.log');
    const out = fs.openSync(logFile, 'a');
    log(`${apis} APIs behind haproxy on 127.0.0.1:${port}, ${workers} workers, S3 on SeaweedFS (output in ${path.relative(ROOT, logFile)})`);
    const stack: ChildProcess = spawn(
      process.execPath,
      [path.join(ROOT, 'scripts', 'scaleOut.js'), '--apis', String(apis), '--workers', String(workers), '--port', String(port), '--api-ports', apiPorts.join(',')],
      { cwd: ROOT, env, stdio: ['ignore', out, out] },
    );
    fs.closeSync(out);
    let stackExit: string | null = null;
    stack.once('exit', (code, signal) => {
      stackExit = signal ?? String(code);
    });
    stops.push(
      () =>
        new Promise<void>((resolve) => {
          if (stackExit !== null) return resolve();
          const kill = setTimeout(() => stack.kill('SIGKILL'), 60_000);
          stack.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          stack.kill('SIGTERM');
        }),
    );
    await services.waitFor(
      async () => {
        if (stackExit !== null) throw new Error(`the scaled-out stack exited (${stackExit}) while starting; see ${logFile}`);
        return fs.readFileSync(logFile, 'utf8').includes('Render studio:');
      },
      'the scaled-out stack',
      300_000,
    );

    const processes = (): SoakProcess[] => {
      if (!stack.pid) return [];
      const found: SoakProcess[] = [];
      for (const pid of childPids(stack.pid)) {
        const name = environOf(pid, 'SERVICE_NAME');
        if (!name || !/^(api|worker)-\d+$/.test(name)) continue;
        const index = Number(name.split('-')[1]) - 1;
        if (name.startsWith('api')) found.push({ name, kind: 'api', pid, metricsUrl: `http://127.0.0.1:${apiPorts[index]}/metrics` });
        else
          found.push({
            name,
            kind: 'worker',
            pid,
            metricsUrl: `http://127.0.0.1:${workerMetricsPort + index}/metrics`,
            temporalMetricsUrl: `http://127.0.0.1:${temporalMetricsPort + index}/metrics`,
          });
      }
      return found.sort((a, b) => a.name.localeCompare(b.name));
    };

    // the S3 endpoint and keys scaleOut.js made for SeaweedFS, as its children have them
    const firstApi = processes().find((p) => p.kind === 'api');
    const storageEnv: Record<string, string> = {};
    for (const name of ['STORAGE_BACKEND', 'S3_ENDPOINT', 'S3_REGION', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'S3_FORCE_PATH_STYLE', 'S3_BUCKET_PREFIX', 'SIGNING_SECRET', 'ENHANCE_ACCESS_CODE']) {
      const value = firstApi ? environOf(firstApi.pid, name) : null;
      if (value !== null) storageEnv[name] = value;
    }

    return {
      baseUrl: `http://127.0.0.1:${port}`,
      databaseUrl,
      temporalAddress: temporal.address,
      storageEnv,
      env,
      logFile,
      temporalLogFile: temporalLog,
      temporalServerMetricsUrl: `http://127.0.0.1:${temporalServerMetricsPort}/metrics`,
      dataDir,
      postgresDataDir: pg.dataDir,
      processes,
      servicePids: () => ({ postgres: pg.pid ?? null, temporal: temporal.pid ?? null, stack: stack.pid ?? null }),
      async restartPostgres() {
        await pg.stop();
        pg = await services.startEmbeddedPostgres({ dataDir: pgDir, port: pgPort, log });
      },
      async restartTemporal() {
        await temporal.stop();
        temporal = await startTemporal();
      },
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * Drops the database `name` on the server at `serverUrl` (closing its connections) and creates it empty: every soak run
 * starts from no rows, wherever the server keeps its data.
 */
export async function freshDatabase(serverUrl: string, name: string): Promise<void> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: `${serverUrl}/postgres` });
  await client.connect();
  try {
    const quoted = `"${name.replace(/"/g, '""')}"`;
    await client.query(`drop database if exists ${quoted} with (force)`);
    await client.query(`create database ${quoted}`);
  } finally {
    await client.end();
  }
}

/**
 * pg_stat_statements (preloaded, created in the soak's database) when the embedded build ships it, and in any case
 * statements slower than 100 ms in the server log, so the report can name slow statements either way. Takes effect at
 * the restart that follows.
 */
async function configurePostgres(serverUrl: string): Promise<void> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: `${serverUrl}/${DATABASE}` });
  await client.connect();
  try {
    const available = await client.query("select 1 from pg_available_extensions where name = 'pg_stat_statements'");
    if (available.rowCount) {
      await client.query("alter system set shared_preload_libraries = 'pg_stat_statements'");
      await client.query('create extension if not exists pg_stat_statements');
    }
    await client.query('alter system set log_min_duration_statement = 100');
    await client.query("alter system set log_line_prefix = '%m [%p] '");
  } finally {
    await client.end();
  }
}
