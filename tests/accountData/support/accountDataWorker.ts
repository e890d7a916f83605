/**
 * A worker in a process of its own, for the test that kills it mid-deletion
 * (`node --import tsx tests/accountData/support/accountDataWorker.ts`). Polls ACCOUNT_DATA_WORKER_QUEUE with every
 * activity of the app. With STALL_AFTER=<activity name>, that activity does its real work, prints
 * "stalled after <name>" and then hangs without heartbeating, as a worker that died right after the work but
 * before reporting it would. Prints "account data worker ready" once polling.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../../activities';
import { loadConfig } from '../../../config/env';
import { logger } from '../../../config/logger';
import { connectDatabase } from '../../../db/connection';
import { createProviders } from '../../../providers';
import { createStorage } from '../../../storage';

async function main(): Promise<void> {
  const taskQueue = process.env.ACCOUNT_DATA_WORKER_QUEUE;
  const bundlePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!taskQueue || !bundlePath) throw new Error('ACCOUNT_DATA_WORKER_QUEUE and TEST_WORKFLOW_BUNDLE_PATH are required');
  const config = loadConfig();
  const knex = connectDatabase(config.databaseUrl);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const activities: Record<string, (...args: never[]) => Promise<unknown>> = createActivities({
    knex,
    config,
    logger,
    storage: createStorage(config),
    providers: createProviders(config, { videoPreset: config.videoPreset }),
  });
  const stall = process.env.STALL_AFTER;
  if (stall) {
    const real = activities[stall];
    if (!real) throw new Error(`no activity ${stall}`);
    activities[stall] = async (...args: never[]) => {
      await real(...args);
      process.stdout.write(`stalled after ${stall}\n`);
      return new Promise<never>(() => undefined);
    };
  }
  const worker = await Worker.create({ connection, taskQueue, workflowBundle: { codePath: bundlePath }, activities });
  const running = worker.run();
  process.stdout.write('account data worker ready\n');
  try {
    await running;
  } finally {
    await connection.close();
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`account data worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
