/**
 * A worker in a process of its own, for the kill-and-restart tests: the real activities on the task queues given in
 * TEST_QUEUES (JSON), with one provider call held for HOLD_DELAY_MS before it runs, so the test can kill the process
 * while that activity is in flight. HOLD says which call: `imageEdit` (the image edit provider, prints EDIT_STARTED)
 * or `draftModels` (a draft job's model run, prints DRAFT_RUN_STARTED). Prints WORKER_READY once polling.
 * Run as `node --import tsx tests/imageEdit/support/workerProcess.ts` (one process, so a SIGKILL stops the worker
 * itself); tests start it through startHeldWorker (heldWorker.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../../../activities';
import { ImageThread } from '../../../activities/imageThread';
import { loadConfig } from '../../../config/env';
import { logger } from '../../../config/logger';
import { connectDatabase } from '../../../db/connection';
import { createProviders, type Providers } from '../../../providers';
import { createStorage } from '../../../storage';

/** Holds `call` for `delayMs` after printing `marker`: the window in which the test kills the process. */
function held<A extends unknown[], R>(marker: string, delayMs: number, call: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    process.stdout.write(`${marker}\n`);
    if (delayMs > 0) await sleep(delayMs);
    return call(...args);
  };
}

function holding(providers: Providers, hold: string | undefined, delayMs: number): Providers {
  if (hold === 'imageEdit') return { ...providers, imageEdit: { edit: held('EDIT_STARTED', delayMs, (r) => providers.imageEdit.edit(r)) } };
  if (hold === 'draftModels') return { ...providers, draftModels: { ...providers.draftModels, run: held('DRAFT_RUN_STARTED', delayMs, (r) => providers.draftModels.run(r)) } };
  throw new Error(`HOLD must be imageEdit or draftModels, got ${hold}`);
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR'), shutdownSignals: ['SIGTERM', 'SIGINT'] });
  const queues = JSON.parse(process.env.TEST_QUEUES ?? '{}') as Record<string, string>;
  const bundlePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!bundlePath || Object.keys(queues).length === 0) throw new Error('TEST_QUEUES and TEST_WORKFLOW_BUNDLE_PATH are required');
  const config = loadConfig();
  const knex = connectDatabase(config.databaseUrl);
  // the image work in its own thread, as workers/main.ts runs it: a SIGKILL takes the thread down with the process
  const imageThread = new ImageThread({ logger });
  const providers = holding(createProviders(config, { localImage: imageThread }), process.env.HOLD, Number(process.env.HOLD_DELAY_MS ?? 0));
  const activities = createActivities({ knex, config, logger, storage: createStorage(config), providers, imageWork: imageThread });
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const workers = await Promise.all(
    Object.values(queues).map((taskQueue) => Worker.create({ connection, taskQueue, workflowBundle: { codePath: bundlePath }, activities })),
  );
  process.stdout.write('WORKER_READY\n');
  try {
    await Promise.all(workers.map((worker) => worker.run()));
  } finally {
    await imageThread.close();
    await connection.close();
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
});
