/**
 * A test file that installs a Temporal Runtime of its own (as tests/imageEdit/harness.ts does, with a logger of its
 * choosing) still gets the quiet logging of tests/setup/temporalWorker.ts: the worker's lines go to its log file.
 */
import fs from 'node:fs';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { uniqueTaskQueue } from '../support/temporal';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { logFileFor } = require('../setup/testLogs');

test("a Runtime a test installs itself logs to the test file's log", async () => {
  const printed: string[] = [];
  Runtime.install({ logger: new DefaultLogger('DEBUG', (entry) => printed.push(entry.message)) });
  const taskQueue = uniqueTaskQueue('quiet-logs-own-runtime');
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  try {
    const worker = await Worker.create({ connection, taskQueue, workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE_PATH! } });
    await worker.runUntil(new Promise((resolve) => setTimeout(resolve, 300)));
  } finally {
    await connection.close();
  }
  const logFile: string = logFileFor(expect.getState().testPath);
  expect(fs.readFileSync(logFile, 'utf8')).toContain(taskQueue);
  expect(printed).toEqual([]);
});
