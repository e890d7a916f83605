/**
 * A worker in a process of its own, for tests that kill it (`node --import tsx tests/clips/support/clipWorker.ts`).
 * Polls CLIP_WORKER_QUEUE with every activity of the app and the bundle globalSetup built; prints
 * "clip worker ready" once polling. Configuration comes from the environment like the real worker's
 * (AI_PROVIDER, FAL_*, VIDEO_PRESET ...); CLIP_PROVIDER_WORK_DIR and CLIP_VIDEO_POLL_MS tune the providers.
 *
 * Two switches for the crash tests (tests/clips/support/clipWorkerProcess.ts), both off unless set:
 * - CLIP_WORKER_HOLD=1: the worker is created (connection, activities, bundle loaded) but polls nothing until a line
 *   arrives on stdin; it prints "clip worker held" meanwhile. A test starts the replacement of a worker it is about to
 *   kill this way, and lets it poll only once the first is dead.
 * - CLIP_WORKER_STICKY_TIMEOUT_MS: the worker's sticky queue schedule-to-start timeout (the SDK's default is 10 s). A
 *   workflow task the server puts on a killed worker's sticky queue goes back to the normal queue after this long.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../../activities';
import { loadConfig } from '../../../config/env';
import { logger } from '../../../config/logger';
import { connectDatabase } from '../../../db/connection';
import { createProviders } from '../../../providers';
import { createStorage } from '../../../storage';

/** Resolves at the first line on stdin (or when stdin closes). */
function released(): Promise<void> {
  return new Promise((resolve) => {
    process.stdin.setEncoding('utf8');
    const done = () => {
      process.stdin.pause();
      resolve();
    };
    process.stdin.on('data', (chunk: string) => {
      if (chunk.includes('\n')) done();
    });
    process.stdin.once('end', done);
  });
}

async function main(): Promise<void> {
  const taskQueue = process.env.CLIP_WORKER_QUEUE;
  const bundlePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!taskQueue || !bundlePath) throw new Error('CLIP_WORKER_QUEUE and TEST_WORKFLOW_BUNDLE_PATH are required');
  const config = loadConfig();
  const knex = connectDatabase(config.databaseUrl);
  const connection = await NativeConnection.connect({ address: config.temporalAddress });
  const pollMs = process.env.CLIP_VIDEO_POLL_MS ? Number(process.env.CLIP_VIDEO_POLL_MS) : undefined;
  const stickyMs = process.env.CLIP_WORKER_STICKY_TIMEOUT_MS ? Number(process.env.CLIP_WORKER_STICKY_TIMEOUT_MS) : undefined;
  const providers = createProviders(config, { videoPreset: config.videoPreset, workDir: process.env.CLIP_PROVIDER_WORK_DIR, videoPollIntervalMs: pollMs });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: { codePath: bundlePath },
    activities: createActivities({ knex, config, logger, storage: createStorage(config), providers }),
    ...(stickyMs !== undefined ? { stickyQueueScheduleToStartTimeout: stickyMs } : {}),
  });
  if (process.env.CLIP_WORKER_HOLD === '1') {
    process.stdout.write('clip worker held\n');
    await released();
  }
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
