import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');

export interface ChildWorker {
  child: ChildProcess;
  output: () => string;
}

export interface HeldWorker extends ChildWorker {
  /** Lets the held worker poll; resolves once it says it is polling. */
  release: () => Promise<void>;
}

/** Resolves once `out()` contains `line`; rejects when the worker exits first or stays silent for a minute. */
function waitForLine(child: ChildProcess, out: () => string, line: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!out().includes(line)) return;
      finish();
      resolve();
    };
    const onExit = (code: number | null) => {
      finish();
      reject(new Error(`worker exited with ${code}: ${out()}`));
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`worker did not say "${line}": ${out()}`));
    }, 60_000);
    const finish = () => {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.off('exit', onExit);
    };
    child.stdout?.on('data', check);
    child.on('exit', onExit);
    check();
  });
}

function startProcess(taskQueue: string, env: Record<string, string>, held: boolean): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'tests/clips/support/clipWorker.ts')], {
    cwd: ROOT,
    detached: true,
    stdio: [held ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    env: { ...process.env, CLIP_WORKER_QUEUE: taskQueue, LOG_LEVEL: 'silent', ...env, ...(held ? { CLIP_WORKER_HOLD: '1' } : {}) },
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return { child, output: () => out };
}

/**
 * Starts tests/clips/support/clipWorker.ts (the app's worker on its own task queue) in a process group of its own,
 * so a kill takes its ffmpeg with it, as a crashed host would. Resolves once it says it is ready.
 */
export async function spawnClipWorker(taskQueue: string, env: Record<string, string>): Promise<ChildWorker> {
  const worker = startProcess(taskQueue, env, false);
  await waitForLine(worker.child, worker.output, 'clip worker ready');
  return worker;
}

/**
 * Like spawnClipWorker, but the worker is only made ready to poll (started, connected, its bundle loaded): it polls
 * nothing until `release()`. A test starts the replacement of a worker it will kill this way, so the new worker's
 * start-up overlaps the first one's work, while no task can reach it before the first is dead.
 */
export async function spawnHeldClipWorker(taskQueue: string, env: Record<string, string>): Promise<HeldWorker> {
  const worker = startProcess(taskQueue, env, true);
  await waitForLine(worker.child, worker.output, 'clip worker held');
  return {
    ...worker,
    release: async () => {
      worker.child.stdin?.end('go\n');
      await waitForLine(worker.child, worker.output, 'clip worker ready');
    },
  };
}

/** Sends the signal to the worker's whole process group and waits for the worker to exit. */
export function killGroup(worker: ChildWorker, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) return resolve();
    worker.child.once('exit', () => resolve());
    process.kill(-(worker.child.pid as number), signal);
  });
}
