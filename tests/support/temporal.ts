import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { NativeConnection, Worker, WorkerOptions, type ReplayResult } from '@temporalio/worker';

/** A task queue of its own per test, so workers of parallel test files never take each other's tasks. */
export function uniqueTaskQueue(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

export async function testClient(): Promise<{ client: Client; close: () => Promise<void> }> {
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
  return { client: new Client({ connection }), close: () => connection.close() };
}

/**
 * Runs `fn` while a real worker (the bundle globalSetup built) polls `taskQueue` on the run's dev server.
 */
export async function withWorker<T>(
  options: Omit<WorkerOptions, 'connection' | 'workflowBundle' | 'workflowsPath'>,
  fn: () => Promise<T>,
): Promise<T> {
  const bundlePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!bundlePath) throw new Error('TEST_WORKFLOW_BUNDLE_PATH is not set: globalSetup builds it from workflows/index.ts');
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  try {
    const worker = await Worker.create({ connection, workflowBundle: { codePath: bundlePath }, ...options });
    return await worker.runUntil(fn());
  } finally {
    await connection.close();
  }
}

/**
 * Terminates the workflows still running on some task queues (tests that start workflows nobody runs): one
 * visibility query for all the queues, on one connection opened at first use and kept until `close()`.
 */
export function workflowTerminator(reason: string): { terminateRunning: (taskQueues: string[]) => Promise<void>; close: () => Promise<void> } {
  let opened: Promise<{ client: Client; close: () => Promise<void> }> | null = null;
  return {
    async terminateRunning(taskQueues) {
      if (taskQueues.length === 0) return;
      opened ??= testClient();
      const { client } = await opened;
      const query = `TaskQueue IN (${taskQueues.map((q) => `'${q}'`).join(', ')}) AND ExecutionStatus = 'Running'`;
      for await (const wf of client.workflow.list({ query })) {
        await client.workflow.getHandle(wf.workflowId, wf.runId).terminate(reason).catch(() => undefined);
      }
    },
    async close() {
      const pending = opened;
      opened = null;
      if (pending) await (await pending).close();
    },
  };
}

/** Replays recorded histories against today's workflow code (the run's bundle, built by globalSetup). */
export async function replayWithCurrentCode(histories: { workflowId: string; history: temporal.api.history.v1.IHistory }[]): Promise<ReplayResult[]> {
  const codePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!codePath) throw new Error('TEST_WORKFLOW_BUNDLE_PATH is not set: globalSetup builds it from workflows/index.ts');
  const results: ReplayResult[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath } }, histories)) results.push(result);
  return results;
}
