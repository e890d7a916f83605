import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { runTryItOnboarding } from '../../services/accounts/onboarding';
import { closeTestKnex, testKnex } from '../support/db';
import { closedPort } from '../support/http';
import { testClient } from '../support/temporal';
import { workerBundle } from '../support/workflowBundles';
import { createPersonalWorkspace } from '../../services/workspaces/personalWorkspace';

const ROOT = path.resolve(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const services = require('../../scripts/lib/services') as {
  startTemporalDevServer(opts: { cli: string; port: number; uiPort?: number }): Promise<{ address: string; stop(): Promise<void> }>;
};

interface RunningWorker {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
  waitForLine: (pattern: RegExp, timeoutMs: number) => Promise<string>;
}

/** Starts the real worker entry (`node --import tsx workers/main.ts`) as operators do, logging JSON at info. */
function startWorkerProcess(env: Record<string, string>): RunningWorker {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const onData = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.pattern.test(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForLine = (pattern: RegExp, timeoutMs: number) => {
    const seen = lines.find((line) => pattern.test(line));
    if (seen) return Promise.resolve(seen);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} in ${timeoutMs} ms:\n${lines.join('\n')}`)), timeoutMs);
      waiters.push({ pattern, resolve: (line) => (clearTimeout(timer), resolve(line)) });
    });
  };
  return { child, lines, exited, waitForLine };
}

describe('worker entry (workers/main.ts)', () => {
  let client: Client;
  let closeClient: () => Promise<void>;
  const started: RunningWorker[] = [];

  beforeAll(async () => {
    ({ client, close: closeClient } = await testClient());
  });

  afterAll(async () => {
    for (const worker of started) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await closeClient();
    await closeTestKnex();
  });

  it('polls the app task queues with a bundle built beforehand (WORKFLOW_BUNDLE_PATH), runs onboarding against PostgreSQL, and exits 0 after SIGTERM', async () => {
    const bundle = await workerBundle();
    const worker = startWorkerProcess({ WORKFLOW_BUNDLE_PATH: bundle });
    started.push(worker);
    const running = JSON.parse(await worker.waitForLine(/"msg":"worker running"/, 90_000)) as Record<string, unknown>;
    // image jobs' sharp work goes to the image thread unless IMAGE_THREAD=off
    expect(running.imageThread).toBe(true);
    expect(running.workflowBundle).toBe(bundle);

    const email = `worker-${randomUUID()}@example.com`;
    const [user] = await testKnex()('users').insert({ email, password_hash: 'x' }).returning<{ id: string }[]>('id');
    await createPersonalWorkspace(testKnex(), { id: user.id, email });
    // default task queue (TASK_QUEUES.onboarding): only the spawned worker polls it
    const result = await runTryItOnboarding(client, { userId: user.id, fileName: 'worker-entry.jpg', platform: null, effect: 'Zoom In' });
    expect(result).toMatchObject({ success: true, projectName: 'worker entry' });
    expect(await testKnex()('projects').where({ workspace_id: user.id }).count<{ count: string }[]>('* as count')).toEqual([{ count: '1' }]);

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.lines.some((line) => line.includes('"msg":"worker stopped"'))).toBe(true);
  }, 120_000);

  it('exits non-zero when Temporal cannot be reached within TEMPORAL_CONNECT_WAIT_SECONDS', async () => {
    const worker = startWorkerProcess({ TEMPORAL_ADDRESS: `127.0.0.1:${await closedPort()}`, TEMPORAL_CONNECT_WAIT_SECONDS: '2' });
    started.push(worker);

    expect(await worker.exited).not.toBe(0);
    expect(worker.lines.some((line) => line.includes('is not reachable; trying again'))).toBe(true);
    expect(worker.lines.some((line) => line.includes('"msg":"worker failed"'))).toBe(true);
  }, 60_000);

  it('waits for a Temporal that is not up yet (a restart, a reboot) and runs once it answers, instead of exiting into a crash loop', async () => {
    const port = await closedPort();
    const worker = startWorkerProcess({ TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
    started.push(worker);
    await worker.waitForLine(/is not reachable; trying again/, 60_000);
    const server = await services.startTemporalDevServer({ cli: process.env.TEMPORAL_CLI_PATH as string, port, uiPort: 0 });
    try {
      await worker.waitForLine(/"msg":"reached Temporal"/, 90_000);
      // without WORKFLOW_BUNDLE_PATH, the workflow code is bundled at start
      expect(JSON.parse(await worker.waitForLine(/"msg":"worker running"/, 90_000))).toMatchObject({ workflowBundle: 'bundled at start' });
      expect(worker.child.exitCode).toBeNull();
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
    } finally {
      await server.stop();
    }
  }, 240_000);

  it('stops at once with one line when WORKFLOW_BUNDLE_PATH names no file', async () => {
    const missing = path.join(os.tmpdir(), `no-bundle-${randomUUID()}.js`);
    const worker = startWorkerProcess({ WORKFLOW_BUNDLE_PATH: missing });
    started.push(worker);
    expect(await worker.exited).toBe(1);
    expect(worker.lines).toEqual([`Configuration error: WORKFLOW_BUNDLE_PATH names ${missing}, which does not exist: build it with \`npm run build:workflows -- ${missing}\` or unset it`]);
  }, 60_000);

  it('stops at once on SIGTERM while it waits for Temporal', async () => {
    const worker = startWorkerProcess({ TEMPORAL_ADDRESS: `127.0.0.1:${await closedPort()}` });
    started.push(worker);
    await worker.waitForLine(/is not reachable; trying again/, 60_000);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.lines.some((line) => line.includes('"msg":"worker stopped before Temporal was reachable"'))).toBe(true);
  }, 90_000);
});
