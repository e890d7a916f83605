import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { closedPort } from '../support/http';
import { seriesLines } from './metricValues';

const ROOT = path.resolve(__dirname, '..', '..');

/** The real worker entry, as operators run it (Runtime.install happens once per process, so it gets a process of its own). */
function startWorkerProcess(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'workers/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function waitFor(condition: () => boolean, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function scrape(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

describe('worker metrics endpoints (workers/main.ts)', () => {
  let worker: ReturnType<typeof startWorkerProcess> | null = null;

  afterAll(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
  });

  it("serves the Temporal SDK's metrics and the app's own on their ports, on 127.0.0.1 by default", async () => {
    const temporalPort = await closedPort();
    const appPort = await closedPort();
    worker = startWorkerProcess({ TEMPORAL_METRICS_PORT: String(temporalPort), WORKER_METRICS_PORT: String(appPort) });
    await waitFor(() => worker!.output().includes('"msg":"worker running"'), 90_000, () => worker!.output());
    expect(worker.output()).toContain('"msg":"worker metrics listening"');

    // the SDK's exporter fills in once the pollers have run a little
    let sdk = await scrape(`http://127.0.0.1:${temporalPort}/metrics`);
    const deadline = Date.now() + 20_000;
    while (!seriesLines(sdk.text).some((line) => line.startsWith('temporal_')) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      sdk = await scrape(`http://127.0.0.1:${temporalPort}/metrics`);
    }
    expect(sdk.status).toBe(200);
    expect(seriesLines(sdk.text)).toEqual(expect.arrayContaining([expect.stringMatching(/^temporal_\w+(\{[^}]*\})? \S+$/)]));
    expect(sdk.text).toMatch(/^temporal_\w+\{[^}]*task_queue="render-studio-[\w-]+"/m);
    // Prometheus naming: counters end in _total, latencies are in seconds
    expect(sdk.text).toMatch(/^temporal_\w+_total\{/m);
    expect(sdk.text).toMatch(/^temporal_\w+_latency_seconds_bucket\{/m);

    const app = await scrape(`http://127.0.0.1:${appPort}/metrics`);
    expect(app.status).toBe(200);
    for (const name of ['jobs_started_total', 'jobs_in_flight', 'job_duration_seconds', 'credits_reserved_total', 'nodejs_eventloop_lag_seconds', 'process_cpu_seconds_total']) {
      expect(app.text).toContain(`# TYPE ${name} `);
    }
    expect((await scrape(`http://127.0.0.1:${appPort}/other`)).status).toBe(404);
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((net) => net && net.family === 'IPv4' && !net.internal)?.address;
    if (external) {
      await expect(fetch(`http://${external}:${appPort}/metrics`)).rejects.toThrow();
      await expect(fetch(`http://${external}:${temporalPort}/metrics`)).rejects.toThrow();
    }

    worker.child.kill('SIGTERM');
    const code = await worker.exited;
    expect({ code, output: code === 0 ? '' : worker.output() }).toEqual({ code: 0, output: '' });
    // closed with the worker
    await expect(fetch(`http://127.0.0.1:${appPort}/metrics`)).rejects.toThrow();
  }, 150_000);
});
