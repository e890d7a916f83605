/**
 * A worker in a process of its own, for the kill-and-restart test: the real activities on the task queues given in
 * TEST_QUEUES (JSON), with the image edit provider held for EDIT_DELAY_MS before it runs, so the test can kill the
 * process while that activity is in flight. Prints WORKER_READY once polling and EDIT_STARTED at each edit.
 * Run as `node --import tsx tests/imageEdit/support/workerProcess.ts` (one process, so a SIGKILL stops the worker itself).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../../../activities';
import { loadConfig } from '../../../config/env';
import { logger } from '../../../config/logger';
import { connectDatabase } from '../../../db/connection';
import { createProviders, type Providers } from '../../../providers';
import { createStorage } from '../../../storage';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR'), shutdownSignals: ['SIGTERM', 'SIGINT'] });
  const queues = JSON.parse(process.env.TEST_QUEUES ?? '{}') as Record<string, string>;
  const bundlePath = process.env.WORKFLOW_BUNDLE_PATH;
  if (!bundlePath || Object.keys(queues).length === 0) throw new Error('TEST_QUEUES and WORKFLOW_BUNDLE_PATH are required');
  const delayMs = Number(process.env.EDIT_DELAY_MS ?? 0);
  const config = loadConfig();
  const knex = connectDatabase(config.databaseUrl);
  const providers = createProviders(config);
  const held: Providers = {
    ...providers,
    imageEdit: {
      edit: async (request) => {
        process.stdout.write('EDIT_STARTED\n');
        if (delayMs > 0) await sleep(delayMs);
        return providers.imageEdit.edit(request);
      },
    },
  };
  const activities = createActivities({ knex, config, logger, storage: createStorage(config), providers: held });
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const workers = await Promise.all(
    Object.values(queues).map((taskQueue) => Worker.create({ connection, taskQueue, workflowBundle: { codePath: bundlePath }, activities })),
  );
  process.stdout.write('WORKER_READY\n');
  try {
    await Promise.all(workers.map((worker) => worker.run()));
  } finally {
    await connection.close();
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
});
