import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..', '..');

export interface ChildWorker {
  child: ChildProcess;
  output: () => string;
}

/**
 * Starts tests/clips/support/clipWorker.ts (the app's worker on its own task queue) in a process group of its own,
 * so a kill takes its ffmpeg with it, as a crashed host would. Resolves once it says it is ready.
 */
export async function spawnClipWorker(taskQueue: string, env: Record<string, string>): Promise<ChildWorker> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'tests/clips/support/clipWorker.ts')], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CLIP_WORKER_QUEUE: taskQueue, LOG_LEVEL: 'silent', ...env },
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start: ${out}`)), 60_000);
    child.stdout?.on('data', () => {
      if (out.includes('clip worker ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}: ${out}`));
    });
  });
  return { child, output: () => out };
}

/** Sends the signal to the worker's whole process group and waits for the worker to exit. */
export function killGroup(worker: ChildWorker, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) return resolve();
    worker.child.once('exit', () => resolve());
    process.kill(-(worker.child.pid as number), signal);
  });
}
