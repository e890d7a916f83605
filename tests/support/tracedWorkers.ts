/**
 * Workers that trace as the real worker entry does (workers/main.ts): the real worker's bundle (with
 * workflows/tracingInterceptors.ts), the activity interceptors and the span exporter sink of
 * services/platform/tracing.ts, beside the job metrics sink. Start tracing (startTracing) before calling this.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { temporalWorkerTracing } from '../../services/platform/tracing';
import { jobMetricsSinks } from '../../workers/metrics';
import { workerBundle } from './workflowBundles';

export interface TracedWorkers {
  stop: () => Promise<void>;
}

/** One worker per entry (task queue and its activities) on one connection, running until stop(). */
export async function startTracedWorkers(queues: Array<{ taskQueue: string; activities: object }>): Promise<TracedWorkers> {
  const codePath = await workerBundle();
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const traced = temporalWorkerTracing();
  const workers = await Promise.all(
    queues.map(({ taskQueue, activities }) =>
      Worker.create({ connection, taskQueue, workflowBundle: { codePath }, activities, interceptors: traced.interceptors, sinks: { ...jobMetricsSinks(), ...traced.sinks } }),
    ),
  );
  const running = workers.map((w) => w.run());
  return {
    stop: async () => {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.all(running);
      await connection.close();
    },
  };
}
