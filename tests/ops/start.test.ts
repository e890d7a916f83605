/**
 * The real `npm start` (scripts/start.js) against the run's PostgreSQL server, on a database of its own (its worker's
 * webhook relay hears every endpoint's deliveries in the database it is given, and would send other test files'
 * deliveries through its own Temporal), with its own file-backed Temporal dev server (so its workers poll the app's
 * real task queues without meeting other test files' runs), the API and a worker.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { clipWorkflowId } from '../../workflows/clipGeneration';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratchDatabase';
import { workerBundle } from '../support/workflowBundles';
import { approveByWorkflow, clipUser, creditState, expectLedgerOk, startClip, waitForJob } from '../clips/fixtures';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as { freePort(): Promise<number>; portOpen(port: number): Promise<boolean> };

const ROOT = path.resolve(__dirname, '..', '..');

interface StartProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  waitForOutput: (pattern: RegExp, timeoutMs: number) => Promise<void>;
}

/** `node scripts/start.js`, or `npm start` itself (npm runs the script under `sh -c`). */
function startNpmStart(env: NodeJS.ProcessEnv, via: 'node' | 'npm' = 'node'): StartProcess {
  const [command, args] = via === 'npm' ? ['npm', ['start']] : [process.execPath, ['scripts/start.js']];
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForOutput = async (pattern: RegExp, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(out)) {
      if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}) before ${pattern}:\n${out}`);
      if (Date.now() > deadline) throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  return { child, output: () => out, exited, waitForOutput };
}

/** Every live descendant of `pid`, from /proc (start.js's children run in process groups of their own). */
function descendants(pid: number): Array<{ pid: number; cmd: string }> {
  const parents = new Map<number, number>();
  const cmds = new Map<number, string>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
      cmds.set(Number(entry), fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim());
    } catch {
      // gone meanwhile
    }
  }
  const found: Array<{ pid: number; cmd: string }> = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push({ pid: child, cmd: cmds.get(child) ?? '' });
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

async function allGone(processes: Array<{ pid: number; cmd: string }>, timeoutMs: number): Promise<Array<{ pid: number; cmd: string }>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = processes.filter((p) => alive(p.pid));
    if (!left.length || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('npm start (scripts/start.js)', () => {
  let dataDir: string;
  let dist: string;
  // the two scenarios run side by side (each on ports, a DATA_DIR and a database of its own; each walks only the
  // process tree of its own npm start), so the one's waits (the paced render, the heartbeat timeout, the worker's
  // bundling) overlap the other's work; each test awaits its own scenario
  const starts: StartProcess[] = [];
  const seen: Array<{ pid: number; cmd: string }> = [];
  const scenarios = new Map<string, Promise<void>>();
  let stopped = false;
  let temporal: { client: Client; connection: Connection } | null = null;
  let scratch: ScratchDatabase | null = null;

  const launch = (env: NodeJS.ProcessEnv, via: 'node' | 'npm' = 'node'): StartProcess => {
    if (stopped) throw new Error('the file is over: no further npm start');
    const started = startNpmStart(env, via);
    starts.push(started);
    return started;
  };
  const noteChildren = (start: StartProcess) => {
    const found = descendants(start.child.pid as number);
    seen.push(...found);
    return found;
  };
  const scenario = (name: string, run: () => Promise<void>): Promise<void> => {
    let running = scenarios.get(name);
    if (!running) {
      running = run();
      // the test awaits it; a failure before that is not an unhandled rejection
      running.catch(() => undefined);
      scenarios.set(name, running);
    }
    return running;
  };

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-start-'));
    // mkdtemp makes it 700: as root, the embedded PostgreSQL would move its data out (tests/ops/embeddedPostgres700.test.ts)
    fs.chmodSync(dataDir, 0o755);
    dist = path.join(dataDir, 'dist');
    fs.mkdirSync(dist);
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><div id="root"></div>');
    scenario('worker restart', workerRestart);
    scenario('embedded', embeddedPostgres);
  });

  afterAll(async () => {
    stopped = true;
    await temporal?.connection.close();
    // after a failure: stop what is still running
    await Promise.all(
      starts.map(async (start) => {
        if (start.child.exitCode !== null || start.child.signalCode !== null) return;
        process.kill(start.child.pid as number, 'SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([start.exited, new Promise((r) => (timer = setTimeout(r, 30_000)))]);
        clearTimeout(timer);
      }),
    );
    for (const { pid } of await allGone(seen, 30_000)) process.kill(pid, 'SIGKILL');
    await scratch?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  it('restarts a SIGKILLed worker mid-clip (the clip finishes, the ledger is exact) and SIGTERM leaves no child running', () => scenario('worker restart', workerRestart), 600_000);

  it('with the embedded PostgreSQL: SIGTERM (to start.js, then to npm start) stops the API, the worker, the Temporal dev server and PostgreSQL; the next start reuses the data and the generated secret', () => scenario('embedded', embeddedPostgres), 600_000);

  async function workerRestart(): Promise<void> {
    const [port, temporalPort, uiPort] = [await services.freePort(), await services.freePort(), await services.freePort()];
    // the clip's render is paced (tests/clips/support/pacedFfmpeg.sh: the real render at a fifth of real time, next to
    // no CPU) while `paceFile` exists, so the worker is killed mid-render whatever the machine's speed; the file goes
    // with the kill, and the restarted worker renders at full speed, at the tests' preset
    const paceFile = path.join(dataDir, 'pace-renders');
    fs.writeFileSync(paceFile, '');
    const paced = { FFMPEG_PATH: path.join(ROOT, 'tests/clips/support/pacedFfmpeg.sh'), PACED_FFMPEG_WHILE: paceFile, PACED_FFMPEG_SPEED: '0.2' };
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', TEMPORAL_PORT: String(temporalPort), TEMPORAL_UI_PORT: String(uiPort), DATA_DIR: dataDir, FRONTEND_DIST: dist, LOG_LEVEL: 'info', NODE_ENV: 'development', VIDEO_PRESET: 'ultrafast', ...paced };
    for (const name of ['TEMPORAL_ADDRESS', 'STORAGE_DIR', 'TEST_WORKFLOW_BUNDLE_PATH']) delete env[name];
    // the worker's bundle built beforehand, with heartbeat timeouts of 15 s (tests/support/workflows/shortHeartbeats.ts):
    // the killed worker's clip is retried on the restarted one after that, not after the app's minute. The second
    // test's first start runs without one, so bundling at start is run there
    env.WORKFLOW_BUNDLE_PATH = await workerBundle({ shortHeartbeats: true });
    // already migrated (npm start finds nothing to apply): the second test has npm start migrate a new database
    scratch = await createScratchDatabase('start', { migrated: true });
    env.DATABASE_URL = scratch.url;
    const start = launch(env);
    await start.waitForOutput(/Render studio: {2}http:\/\/127\.0\.0\.1:\d+/, 180_000);
    await start.waitForOutput(/"msg":"worker running"/, 180_000);
    const baseUrl = `http://127.0.0.1:${port}`;
    expect((await fetch(`${baseUrl}/health/ready`)).status).toBe(200);

    const user = await clipUser(baseUrl, { knex: scratch.knex });
    const res = await startClip(baseUrl, user, { movement: 'Pan Right', platform: 'Facebook' });
    expect(res.status).toBe(200);
    const jobId = res.body.jobId as string;
    const before = await waitForJob(baseUrl, user, jobId, { intervalMs: 200, until: (j) => j.progress > 12 || !['pending', 'processing'].includes(j.status), timeoutMs: 120_000 });
    expect(before.job.status).toBe('processing');

    const worker = descendants(start.child.pid as number).find((p) => p.cmd.includes('workers/main.ts'));
    expect(worker).toBeDefined();
    process.kill(worker!.pid, 'SIGKILL');
    fs.rmSync(paceFile);
    await start.waitForOutput(/\[start\] worker was killed by SIGKILL after [\d.]+s; restarting it in 1s/, 10_000);
    await start.waitForOutput(/\[start\] worker restarted \(pid \d+, restart 1\)/, 10_000);
    // the stack keeps serving while the worker is down and coming back
    expect((await fetch(`${baseUrl}/health/live`)).status).toBe(200);

    const { job } = await waitForJob(baseUrl, user, jobId, { intervalMs: 500, timeoutMs: 300_000 });
    expect(job).toMatchObject({ status: 'completed', progress: 100 });
    expect(await creditState(scratch!.knex, user.id)).toEqual({ credits: 5, reserved: 4, available: 1 });
    expect(await scratch!.knex('credit_reservations').where({ workspace_id: user.id })).toHaveLength(1);
    const connection = await Connection.connect({ address: `127.0.0.1:${temporalPort}` });
    temporal = { connection, client: new Client({ connection }) };
    // the work the kill interrupted ran again on the restarted worker
    const history = await temporal.client.workflow.getHandle(clipWorkflowId(jobId)).fetchHistory();
    const attempts = (history.events ?? []).filter((e) => e.activityTaskStartedEventAttributes).map((e) => Number(e.activityTaskStartedEventAttributes?.attempt));
    expect(Math.max(...attempts)).toBeGreaterThanOrEqual(2);
    await approveByWorkflow(temporal.client, job.result?.approvalWorkflowId as string, user.id);
    expect(await creditState(scratch!.knex, user.id)).toEqual({ credits: 1, reserved: 0, available: 1 });
    expect(await scratch!.knex('credit_transactions').where({ workspace_id: user.id, transaction_type: 'consume' })).toHaveLength(1);
    await expectLedgerOk(scratch!.knex, user.id);
    await temporal.connection.close();
    temporal = null;

    const children = noteChildren(start);
    expect(children.map((p) => p.cmd)).toEqual(
      expect.arrayContaining([expect.stringContaining('temporal server start-dev'), expect.stringContaining('api/server.ts'), expect.stringContaining('workers/main.ts')]),
    );
    process.kill(start.child.pid as number, 'SIGTERM');
    expect(await start.exited).toBe(0);
    const left = children.filter((p) => alive(p.pid));
    expect(left).toEqual([]);
    expect(await services.portOpen(temporalPort)).toBe(false);
    expect(await services.portOpen(port)).toBe(false);
    expect(start.output()).not.toMatch(/crash-looping|cleanup failed/);
  }

  async function embeddedPostgres(): Promise<void> {
    const embeddedDir = path.join(dataDir, 'embedded');
    const ports = { PORT: await services.freePort(), TEMPORAL_PORT: await services.freePort(), TEMPORAL_UI_PORT: await services.freePort(), EMBEDDED_PG_PORT: await services.freePort() };
    const env: NodeJS.ProcessEnv = { ...process.env, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])), HOST: '127.0.0.1', DATA_DIR: embeddedDir, FRONTEND_DIST: dist, LOG_LEVEL: 'info', NODE_ENV: 'development' };
    // no SIGNING_SECRET either: npm start generates one into DATA_DIR/secrets.json on the first start and reuses it
    for (const name of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'STORAGE_DIR', 'TEST_WORKFLOW_BUNDLE_PATH', 'WORKFLOW_BUNDLE_PATH', 'SIGNING_SECRET']) delete env[name];
    const secretsFile = path.join(embeddedDir, 'secrets.json');
    let firstSecrets = '';
    for (const round of [1, 2]) {
      // round 2 through npm: its SIGTERM kills npm's shell, never start.js, which must notice and stop all the same
      // round 1 bundles the workflows at start (no WORKFLOW_BUNDLE_PATH) and waits for the worker; round 2 is stopped
      // before its worker is up, so it is given a bundle built beforehand rather than start a webpack run for nothing
      // (the other test's, with short heartbeats: this worker runs no workflow)
      if (round === 2) env.WORKFLOW_BUNDLE_PATH = await workerBundle({ shortHeartbeats: true });
      const start = launch(env, round === 1 ? 'node' : 'npm');
      await start.waitForOutput(/Render studio: {2}http:\/\/127\.0\.0\.1:\d+/, 180_000);
      expect((await fetch(`http://127.0.0.1:${ports.PORT}/health/ready`)).status).toBe(200);
      expect(start.output()).toContain(round === 1 ? 'migrations applied' : 'migrations: up to date');
      if (round === 1) {
        // a healthy first start in a fresh folder warns of nothing and prints no stack (the API's start-up sweeps
        // have run once the worker is up)
        await start.waitForOutput(/"msg":"worker running"/, 180_000);
        expect(start.output()).not.toMatch(/"level":(40|50|60)|\bwarn(ing)?\b|\n\s+at .+:\d+:\d+\)?\n/i);
      }
      expect(start.output()).not.toContain('PostgreSQL data in');
      expect(fs.existsSync(path.join(embeddedDir, 'postgres', 'PG_VERSION'))).toBe(true);
      expect(fs.statSync(secretsFile).mode & 0o777).toBe(0o600);
      if (round === 1) {
        expect(start.output()).toContain('generated SIGNING_SECRET into');
        firstSecrets = fs.readFileSync(secretsFile, 'utf8');
        expect(JSON.parse(firstSecrets).SIGNING_SECRET).toMatch(/^[0-9a-f]{64}$/);
      } else {
        expect(start.output()).not.toContain('generated SIGNING_SECRET');
        expect(fs.readFileSync(secretsFile, 'utf8')).toBe(firstSecrets);
      }
      const children = noteChildren(start);
      expect(children.map((p) => p.cmd)).toEqual(expect.arrayContaining([expect.stringContaining('temporal server start-dev'), expect.stringMatching(/bin\/postgres -D/)]));
      if (round === 2) expect(children.map((p) => p.cmd)).toContainEqual(expect.stringContaining('scripts/start.js'));
      process.kill(start.child.pid as number, 'SIGTERM');
      if (round === 1) expect(await start.exited).toBe(0);
      expect(await allGone(children, 60_000)).toEqual([]);
      for (const port of Object.values(ports)) expect(await services.portOpen(port)).toBe(false);
  }
  }
});
