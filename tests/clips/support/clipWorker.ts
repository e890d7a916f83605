/**
 * A worker in a process of its own, for tests that kill it (`node --import tsx tests/clips/support/clipWorker.ts`).
 * Polls CLIP_WORKER_QUEUE with every activity of the app and the bundle globalSetup built; prints
 * "clip worker ready" once polling. Configuration comes from the environment like the real worker's
 * (AI_PROVIDER, FAL_*, VIDEO_PRESET ...); CLIP_PROVIDER_WORK_DIR and CLIP_VIDEO_POLL_MS tune the providers.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../../activities';
import { loadConfig } from '../../../config/env';
import { logger } from '../../../config/logger';
import { connectDatabase } from '../../../db/connection';
import { createProviders } from '../../../providers';
import { createStorage } from '../../../storage';

async function main(): Promise<void> {
  const taskQueue = process.env.CLIP_WORKER_QUEUE;
  const bundlePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!taskQueue || !bundlePath) throw new Error('CLIP_WORKER_QUEUE and TEST_WORKFLOW_BUNDLE_PATH are required');
  const config = loadConfig();
  const knex = connectDatabase(config.databaseUrl);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const pollMs = process.env.CLIP_VIDEO_POLL_MS ? Number(process.env.CLIP_VIDEO_POLL_MS) : undefined;
  const providers = createProviders(config, { videoPreset: config.videoPreset, workDir: process.env.CLIP_PROVIDER_WORK_DIR, videoPollIntervalMs: pollMs });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: bundlePath },
    activities: createActivities({ knex, config, logger, storage: createStorage(config), providers }),
  });
  const running = worker.run();
  process.stdout.write('clip worker ready\n');
  try {
    await running;
  } finally {
    await connection.close();
    await knex.destroy();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`clip worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
