/**
 * Worker entry (`npx tsx workers/main.ts`): one Worker per task queue of TASK_QUEUES, all in this process,
 * sharing one connection and the real dependencies. SIGINT/SIGTERM drain in-flight tasks, then exit 0.
 * Scale out by running more copies of this process.
 */
import './tracingPreload'; // first: the instrumentations patch modules before they load
import fs from 'node:fs';
import { Client } from '@temporalio/client';
import sharp from 'sharp';
import { DefaultLogger, NativeConnection, Runtime, Worker, type LogLevel } from '@temporalio/worker';
import { createActivities } from '../activities';
import { ImageThread } from '../activities/imageThread';
import { ConfigError, exitOnConfigError, loadConfig } from '../config/env';
import { logger } from '../config/logger';
import { connectDatabase } from '../db/connection';
import { createProviders } from '../providers';
import { ensureStorageMaintenanceSchedule } from '../services/content/renderThumbnailJobs';
import { webhookDeliverySettings } from '../services/integrations/webhookDeliverySettings';
import { ensureWebhookPruneSchedule, startWebhookRelay } from '../services/integrations/webhookRelay';
import { ensureNotificationDigestSchedule } from '../services/review/notificationMail';
import { createStorage } from '../storage';
import { jobMetricsSinks, startWorkerMetricsServer, temporalTelemetryOptions } from './metrics';
import { TASK_QUEUES } from '../domain/taskQueues';
import { connectWhenReachable } from './temporalConnection';
import { temporalClientInterceptors, temporalWorkerTracing } from '../services/platform/tracing';
import { bundleWorkflowsInThread, workerBundleSource } from './workflowBundle';

async function main(): Promise<void> {
  // libvips' operation cache (50 MB by default) only pays off for the same operation on the same input again, which a
  // worker working through different images never does; off, the worker's RSS stays flat over a long run (the soak)
  sharp.cache(false);
  // the SDK's own lines go through pino, at WARN unless TEMPORAL_LOG_LEVEL says otherwise
  const sdkLevel = (process.env.TEMPORAL_LOG_LEVEL ?? 'WARN') as LogLevel;
  const sdkLogger = new DefaultLogger(sdkLevel, ({ level, message, meta }) => {
    const pinoLevel = level === 'ERROR' ? 'error' : level === 'WARN' ? 'warn' : level === 'INFO' ? 'info' : 'debug';
    logger[pinoLevel]({ sdk: 'temporal', ...meta }, message);
  });
  const config = loadConfig();
  if (config.workflowBundlePath && !fs.existsSync(config.workflowBundlePath)) {
    throw new ConfigError(`WORKFLOW_BUNDLE_PATH names ${config.workflowBundlePath}, which does not exist: build it with \`npm run build:workflows -- ${config.workflowBundlePath}\` or unset it`);
  }
  Runtime.install({ shutdownSignals: ['SIGINT', 'SIGTERM'], logger: sdkLogger, ...temporalTelemetryOptions(config) });
  const metricsServer = await startWorkerMetricsServer(config);
  if (metricsServer || config.temporalMetricsPort !== null) {
    logger.info({ appMetrics: metricsServer?.url ?? null, temporalMetricsPort: config.temporalMetricsPort }, 'worker metrics listening');
  }
  const knex = connectDatabase(config.databaseUrl, { min: 0, max: config.workerDatabasePoolMax });
  // a Temporal that is restarting or not up yet is waited for (TEMPORAL_CONNECT_WAIT_SECONDS), not a crash loop
  const reached = await connectWhenReachable({
    address: config.temporalAddress,
    waitSeconds: config.temporalConnectWaitSeconds,
    logger,
    connect: () => NativeConnection.connect({ address: config.temporalAddress }),
  }).catch(async (err: unknown) => {
    await knex.destroy();
    await metricsServer?.close();
    throw err;
  });
  if (reached.stopped) {
    logger.info({ address: config.temporalAddress }, 'worker stopped before Temporal was reachable');
    await knex.destroy();
    await metricsServer?.close();
    process.exit(0);
  }
  const connection = reached.connection;
  // image jobs' sharp work on a heap of its own (activities/imageThread.ts), started now rather than by the first job
  const imageThread = config.imageThread ? new ImageThread({ logger }) : null;
  imageThread?.start();
  try {
    const providers = createProviders(config, {
      videoPreset: config.videoPreset,
      localImage: imageThread ?? undefined,
      videoPollIntervalMs: config.falVideoPollIntervalMs,
      imagePollIntervalMs: config.falImagePollIntervalMs,
    });
    const activities = createActivities({ knex, config, logger, storage: createStorage(config), providers, imageWork: imageThread ?? undefined });
    // bundled once and shared, instead of once per queue; in a thread, so webpack leaves nothing on this heap. A bundle
    // built beforehand (WORKFLOW_BUNDLE_PATH, `npm run build:workflows`) is loaded as it is: a start without webpack
    const workflowBundle = config.workflowBundlePath
      ? { codePath: config.workflowBundlePath }
      : await bundleWorkflowsInThread({ ...workerBundleSource(), logLevel: sdkLevel, logger: sdkLogger });
    // spans of activities and workflows (with tracing off: nothing)
    const tracing = temporalWorkerTracing();
    const workers = await Promise.all(
      Object.values(TASK_QUEUES).map((taskQueue) =>
        Worker.create({
          connection,
          namespace: config.temporalNamespace,
          taskQueue,
          workflowBundle,
          activities,
          ...tracing,
          sinks: { ...jobMetricsSinks(), ...tracing.sinks },
          // a hosted clip waits on a workflow timer, not in a slot (workflows/clipGeneration.ts): the slots bound the
          // activities that run at once, the cache the workflows kept in memory between their tasks (docs/benchmarks.md "Worker capacity")
          maxConcurrentActivityTaskExecutions: taskQueue === TASK_QUEUES.media ? config.mediaActivityConcurrency : config.workerActivityConcurrency,
          ...(config.workflowCacheSize !== null ? { maxCachedWorkflows: config.workflowCacheSize } : {}),
        }),
      ),
    );
    logger.info({ taskQueues: Object.values(TASK_QUEUES), address: config.temporalAddress, imageThread: config.imageThread, workflowBundle: config.workflowBundlePath ?? 'bundled at start' }, 'worker running');
    // the hourly storage maintenance (missing thumbnails, objects without a row), and one run now
    const client = new Client({ connection, namespace: config.temporalNamespace, interceptors: temporalClientInterceptors() });
    ensureStorageMaintenanceSchedule(client).catch((err: unknown) => logger.warn({ err }, 'could not create or trigger the storage maintenance schedule'));
    // webhook deliveries: the outbox's new rows to their endpoint's workflow, and the daily pruning of the log
    const webhookRelay = startWebhookRelay({ knex, databaseUrl: config.databaseUrl, client, settings: webhookDeliverySettings(), logger });
    ensureWebhookPruneSchedule(client).catch((err: unknown) => logger.warn({ err }, 'could not create the webhook log prune schedule'));
    // the daily notification e-mail digests, looked for hourly
    ensureNotificationDigestSchedule(client).catch((err: unknown) => logger.warn({ err }, 'could not create the notification digest schedule'));
    try {
      await Promise.all(workers.map((worker) => worker.run()));
    } finally {
      await webhookRelay.close();
    }
    logger.info('worker stopped');
  } finally {
    await imageThread?.close();
    await connection.close();
    await knex.destroy();
    await metricsServer?.close();
  }
}

main().catch((err: unknown) => {
  if (exitOnConfigError(err)) return;
  logger.error({ err }, 'worker failed');
  process.exit(1);
});
