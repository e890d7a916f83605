/**
 * Faults under the scaled-out stack (issue 28, item 3; what `npm run bench -- soak --chaos` does for minutes, once
 * each here): `npm run start:scaled` (scripts/scaleOut.js: two APIs behind haproxy, one worker, under its supervisor)
 * on a PostgreSQL and a Temporal dev server of this test's own, so they can be restarted in place (the run's shared
 * server cannot be restarted under the other test files). The faults are injected and their recovery measured by the
 * soak's own injector (bench/soak/chaos.ts): a worker and an API SIGKILLed (the supervisor restarts them), then
 * PostgreSQL restarted (fast shutdown, same data folder and port), then the Temporal dev server (same history file and
 * port). A clip started before the faults must end completed exactly once, be charged once when approved, and the
 * invariant checker (`npm run check`) must find nothing wrong. Waits are bounded; nothing is timed.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory, { type Knex } from 'knex';
import { createFaultInjector, type ChaosTopology, type FaultInjector, type FaultRecord } from '../../bench/soak/chaos';
import { childPids, environOf, type SoakProcess } from '../../bench/soak/topology';
import { CREDIT_COST } from '../../domain/constants';
import { createTestUser, type TestUser } from '../support/accounts';
import { request, type JsonResponse } from '../support/http';
import { createProject, pngBytes, uploadForm } from '../projects/fixtures';
import { workerBundle } from '../support/workflowBundles';

interface ServerHandle {
  pid: number;
  stop(): Promise<void>;
}
interface EmbeddedPostgres extends ServerHandle {
  url: string;
  ensureDatabase(name: string): Promise<void>;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as {
  freePort(): Promise<number>;
  startEmbeddedPostgres(opts: { dataDir: string; port: number }): Promise<EmbeddedPostgres>;
  startTemporalDevServer(opts: { cli: string; port: number; uiPort?: number; dbFile?: string; logFile?: string }): Promise<ServerHandle & { address: string }>;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const tools = require('../../scripts/lib/tools') as { ensureTemporalCli(): string };

const ROOT = path.resolve(__dirname, '..', '..');

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A call as the front end makes it through the balancer: an answer of 502-504 or no answer is asked again (bounded). */
async function retried<T>(what: string, call: () => Promise<JsonResponse<T>>): Promise<JsonResponse<T>> {
  let last: unknown = null;
  for (let attempt = 1; attempt <= 20; attempt += 1) {
    try {
      const res = await call();
      if (res.status < 502 || res.status > 504) return res;
      last = `${res.status} ${JSON.stringify(res.body)}`;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 500 * Math.min(attempt, 4)));
  }
  throw new Error(`${what} failed 20 times; last: ${String(last)}`);
}

describe('the scaled-out stack through faults (SIGKILLed API and worker, PostgreSQL and Temporal restarted in place)', () => {
  let dir: string;
  let pg: EmbeddedPostgres | null = null;
  let temporal: (ServerHandle & { address: string }) | null = null;
  let stack: ChildProcess | null = null;
  let stackExited: Promise<unknown> = Promise.resolve();
  let output = '';
  let knex: Knex;
  let baseUrl = '';
  let topology: ChaosTopology;
  let databaseUrl = '';
  let storageDir = '';
  const chaosLines: string[] = [];
  let injector: FaultInjector | null = null;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-chaos-'));
    // the embedded PostgreSQL runs as the postgres user when the tests run as root: it must reach its folder
    fs.chmodSync(dir, 0o755);
    const pgDir = path.join(dir, 'postgres');
    const pgPort = await services.freePort();
    const cli = tools.ensureTemporalCli();
    const temporalPort = await services.freePort();
    fs.mkdirSync(path.join(dir, 'temporal'));
    const startTemporal = () =>
      services.startTemporalDevServer({ cli, port: temporalPort, uiPort: 0, dbFile: path.join(dir, 'temporal', 'temporal.db'), logFile: path.join(dir, 'temporal', 'server.log') });
    // PostgreSQL, the Temporal dev server and the worker's bundle at once (none needs another); each kept as soon as it
    // is up, and all settled before a failure is thrown, so afterAll stops whatever did start
    let workflowBundlePath = '';
    const started = await Promise.allSettled([
      services.startEmbeddedPostgres({ dataDir: pgDir, port: pgPort }).then(async (server) => {
        pg = server;
        await server.ensureDatabase('render_studio');
      }),
      startTemporal().then((server) => (temporal = server)),
      // with heartbeat timeouts of 15 s (tests/support/workflows/shortHeartbeats.ts): the SIGKILLed worker's clip is
      // retried on the restarted one after that, not after the app's minute
      workerBundle({ shortHeartbeats: true }).then((bundle) => (workflowBundlePath = bundle)),
    ]);
    for (const outcome of started) if (outcome.status === 'rejected') throw outcome.reason;
    if (!pg || !temporal) throw new Error('PostgreSQL or Temporal did not start');
    databaseUrl = `${pg.url}/render_studio`;

    const dist = path.join(dir, 'dist');
    fs.mkdirSync(dist);
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><div id="root"></div>');
    const ports = [await services.freePort(), await services.freePort(), await services.freePort()];
    const stackDir = path.join(dir, 'stack');
    storageDir = path.join(stackDir, 'storage');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      DATA_DIR: stackDir,
      FRONTEND_DIST: dist,
      HOST: '127.0.0.1',
      LOCAL_STRIPE: 'off',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
      AI_PROVIDER: 'local',
      // the worker's bundle built beforehand: the SIGKILLed worker comes back without running webpack again
      WORKFLOW_BUNDLE_PATH: workflowBundlePath,
    };
    for (const name of ['STORAGE_DIR', 'STORAGE_BACKEND', 'S3_ENDPOINT', 'S3_PUBLIC_URL', 'PORT', 'TRUST_PROXY', 'PUBLIC_URL', 'WORKER_METRICS_PORT', 'TEMPORAL_METRICS_PORT']) delete env[name];
    const child = spawn(process.execPath, ['scripts/scaleOut.js', '--apis', '2', '--workers', '1', '--storage', 'local', '--port', String(ports[0]), '--api-ports', `${ports[1]},${ports[2]}`], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    stack = child;
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    stackExited = new Promise((resolve) => child.once('exit', resolve));
    await until(`the stack's banner in its output:\n${output}`, 300_000, () => {
      if (child.exitCode !== null) throw new Error(`start:scaled exited (${child.exitCode}):\n${output}`);
      return /Ctrl-C stops everything/.test(output) ? true : undefined;
    });
    baseUrl = `http://127.0.0.1:${ports[0]}`;

    topology = {
      baseUrl,
      temporalAddress: temporal.address,
      processes: () => {
        const found: SoakProcess[] = [];
        for (const pid of childPids(child.pid as number)) {
          const name = environOf(pid, 'SERVICE_NAME');
          if (!name || !/^(api|worker)-\d+$/.test(name)) continue;
          const index = Number(name.split('-')[1]) - 1;
          found.push({ name, kind: name.startsWith('api') ? 'api' : 'worker', pid, metricsUrl: name.startsWith('api') ? `http://127.0.0.1:${ports[1 + index]}/metrics` : '' });
        }
        return found;
      },
      restartPostgres: async () => {
        await pg?.stop();
        pg = await services.startEmbeddedPostgres({ dataDir: pgDir, port: pgPort });
      },
      restartTemporal: async () => {
        await temporal?.stop();
        temporal = await startTemporal();
      },
    };
    knex = knexFactory({ client: 'pg', connection: databaseUrl, pool: { min: 0, max: 2 } });
  }, 420_000);

  afterAll(async () => {
    await injector?.close();
    await knex?.destroy();
    if (stack && stack.exitCode === null && stack.signalCode === null) {
      process.kill(stack.pid as number, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([stackExited, new Promise((r) => (timer = setTimeout(r, 60_000)))]);
      clearTimeout(timer);
      if (stack.exitCode === null && stack.signalCode === null) process.kill(-(stack.pid as number), 'SIGKILL');
    }
    // the stack is down: neither server needs the other any more
    await Promise.all([temporal?.stop(), pg?.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('serves again after each fault, and a clip started before them completes once and is charged once', async () => {
    const chaos = createFaultInjector({ topology, log: (line) => chaosLines.push(line), random: Math.random, recoveryTimeoutMs: 180_000 });
    injector = chaos;
    // a clip is admitted by its workflow, so the worker must poll first (the banner comes once the APIs answer)
    await until('the worker polling', 240_000, async () => ((await chaos.workersPolling()) ? true : undefined));
    const user: TestUser = await createTestUser(baseUrl, { verified: false });
    const project = await createProject(baseUrl, user, 'Chaos lofts');
    const upload = await request<{ render: { data: { id: string } } }>(baseUrl, '/api/upload/renders', {
      token: user.token,
      body: uploadForm({ bytes: await pngBytes(640, 360), fileName: 'lofts.png', type: 'image/png' }, { projectId: project.id }),
    });
    expect({ status: upload.status, body: upload.body }).toMatchObject({ status: 200 });
    const started = await request<{ jobId: string }>(baseUrl, '/api/video-generation/start', {
      token: user.token,
      json: { options: { movement: 'Zoom In', platform: 'YouTube' }, context: { projectId: project.id, renderId: upload.body.render.data.id } },
    });
    expect({ status: started.status, body: started.body }).toMatchObject({ status: 200 });
    const jobId = started.body.jobId;

    const faults: Array<FaultRecord | null> = [];
    faults.push(await chaos.kill('worker-1'));
    faults.push(await chaos.kill('api-2'));
    faults.push(await chaos.restart('restart-postgres'));
    faults.push(await chaos.restart('restart-temporal'));
    // each fault was injected and the stack served again afterwards (the bound is the injector's, 180 s)
    expect({ faults: faults.map((f) => f && { kind: f.kind, target: f.target, recovered: f.recoveredAfterMs !== null }), log: chaosLines }).toEqual({
      faults: [
        { kind: 'kill-worker', target: 'worker-1', recovered: true },
        { kind: 'kill-api', target: 'api-2', recovered: true },
        { kind: 'restart-postgres', target: 'postgres', recovered: true },
        { kind: 'restart-temporal', target: 'temporal', recovered: true },
      ],
      log: chaosLines,
    });
    expect(faults[0]?.newPid).not.toBe(faults[0]?.pid);
    expect(faults[1]?.newPid).not.toBe(faults[1]?.pid);

    // the stack serves: a sign-up through the balancer, and both APIs ready (database, Temporal, storage)
    // the stack runs on a database of its own, and nothing here needs a verified address
    await createTestUser(baseUrl, { verified: false });
    for (const p of topology.processes().filter((x) => x.kind === 'api')) {
      const ready = await retried('readiness', () => request(p.metricsUrl.replace(/\/metrics$/, ''), '/health/ready'));
      expect({ api: p.name, status: ready.status, body: ready.body }).toMatchObject({ api: p.name, status: 200 });
    }

    // the clip started before the faults ends completed (a killed worker's activity is retried after its heartbeat
    // timeout)
    type ClipJob = { status: string; message: string; result: { approvalId: string } | null };
    let last: ClipJob | null = null;
    const finished = await until(`clip ${jobId} finished (last: ${JSON.stringify(last)})`, 300_000, async () => {
      const res = await retried('clip status', () => request<{ job: ClipJob }>(baseUrl, `/api/video-generation/status/${jobId}`, { token: user.token }));
      last = res.body.job;
      return ['completed', 'failed', 'cancelled'].includes(res.body.job?.status ?? '') ? res.body.job : undefined;
    });
    expect(finished).toMatchObject({ status: 'completed' });
    // once: one job row, one pending item, one reservation for it
    const rows = await knex('video_generation_jobs').where({ id: jobId }).select<Array<{ status: string; workflow_id: string }>>('status', 'workflow_id');
    expect(rows.map((r) => r.status)).toEqual(['completed']);
    const workflowId = rows[0].workflow_id;
    expect(await knex('pending_approvals').where({ source_job_id: jobId }).select('id', 'status')).toEqual([{ id: finished.result?.approvalId, status: 'pending' }]);
    expect(await knex('credit_reservations').where({ idempotency_key: workflowId }).select('status', 'amount')).toEqual([{ status: 'active', amount: CREDIT_COST.clip }]);

    // approved, it is charged once
    const approved = await retried('approve', () => request(baseUrl, '/api/approvals/approve', { token: user.token, json: { approvalId: finished.result?.approvalId } }));
    expect(approved.status).toBe(200);
    const reservation = await knex('credit_reservations').where({ idempotency_key: workflowId }).first<{ id: string; status: string }>('id', 'status');
    expect(reservation?.status).toBe('consumed');
    const credits = await retried('credits', () => request<{ data: { credits: number } }>(baseUrl, '/api/credits/summary', { token: user.token }));
    expect(credits.body.data.credits).toBe(5 - CREDIT_COST.clip);

    // the operators' checker finds every invariant holding (ledger, storage against rows, workflows against jobs)
    const check = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/check.ts', '--json', '--grace-seconds', '0'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporal?.address, STORAGE_BACKEND: 'local', STORAGE_DIR: storageDir, LOG_LEVEL: 'silent' },
      timeout: 120_000,
    });
    expect({ status: check.status, out: check.stdout.slice(-4000), err: check.stderr.slice(-2000) }).toMatchObject({ status: 0 });
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: true });
    // the supervisor restarted what was killed and never gave up on a child
    expect(output).toMatch(/\[scale\] worker-1 was killed by SIGKILL/);
    expect(output).toMatch(/\[scale\] api-2 was killed by SIGKILL/);
    expect(output).not.toMatch(/crash-looping/);
  }, 900_000);
});
