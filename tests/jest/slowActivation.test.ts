/**
 * A workflow activation that runs longer than the SDK's 5 s deadlock limit does not kill the test process.
 *
 * The test Workers run workflows on the test file's own thread (tests/setup/temporalWorker.ts, the SDK's debugMode),
 * in a vm context with `microtaskMode: 'afterEvaluate'`. When the vm's execution timeout fires inside an activation's
 * microtasks, Node 20 leaves the thread's async-id stack unbalanced, and the next native callback ends the process:
 * "Assertion failed: (env_->execution_async_id()) == (0)" in InternalCallbackScope::Close, SIGABRT. On a busy
 * machine an ordinary activation can be stalled past 5 s, which is how jest workers died now and then in full runs
 * (tests/setup/crashRetryRunner.js). The in-thread limit is therefore far above any stall; on the SDK's workflow
 * threads (production) the same timeout only fails the workflow task, which is retried.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { uniqueTaskQueue } from '../support/temporal';

test('an activation stalled past 5 s finishes, and the process lives on', async () => {
  const taskQueue = uniqueTaskQueue('slow-activation');
  const bundle = await bundleWorkflowCode({ workflowsPath: path.join(__dirname, 'fixtures', 'slowActivationWorkflow.ts') });
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const clientConnection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
  // native callbacks with async context around them while the activation runs, as in any test file
  const context = new AsyncLocalStorage<{ n: number }>();
  let reads = 0;
  const busy = setInterval(() => context.run({ n: reads }, () => fs.readFile(__filename, () => (reads += 1))), 5);
  try {
    const worker = await Worker.create({ connection, taskQueue, workflowBundle: bundle });
    const client = new Client({ connection: clientConnection });
    const result = await worker.runUntil(
      client.workflow.execute('slowActivation', { taskQueue, workflowId: `slow-activation-${taskQueue}`, args: [5500], workflowTaskTimeout: '30s' }),
    );
    expect(result).toBe('finished');
    expect(reads).toBeGreaterThan(0);
  } finally {
    clearInterval(busy);
    await clientConnection.close();
    await connection.close();
  }
}, 60_000);
