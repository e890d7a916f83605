/**
 * Starts workerProcess.ts (a worker in its own process with one provider call held) for the kill-and-restart tests,
 * and follows what it prints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Harness } from '../harness';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SCRIPT = path.join(__dirname, 'workerProcess.ts');

export interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  waitFor: (text: string, timeoutMs: number) => Promise<void>;
  exited: Promise<void>;
}

export function startHeldWorker(h: Harness, hold: 'imageEdit' | 'draftModels', delayMs: number): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
    cwd: ROOT,
    env: { ...process.env, TEST_QUEUES: JSON.stringify(h.queues), HOLD: hold, HOLD_DELAY_MS: String(delayMs) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const waitFor = async (text: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!out.includes(text)) {
      if (Date.now() > deadline) throw new Error(`worker did not print ${text} within ${timeoutMs} ms:\n${out}`);
      if (child.exitCode !== null) throw new Error(`worker exited (${child.exitCode}) before printing ${text}:\n${out}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return { child, output: () => out, waitFor, exited };
}

/** Stops what a test started and is still running. */
export async function stopHeldWorkers(started: WorkerProcess[]): Promise<void> {
  for (const worker of started) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
  }
}
