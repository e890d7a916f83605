import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { jobDuration, jobsCancelledTotal, jobsCompletedTotal, jobsFailedTotal, jobsInFlight, jobsStartedTotal, uploadBytesTotal } from '../../services/platform/metrics';
import { JOB_METRICS_INTERCEPTOR_MODULE, jobMetricsSinks } from '../../workers/metrics';
import { dataExportWorkflow, type DataExportResult } from '../../workflows';
import { closeTestKnex } from '../support/db';
import { uniqueTaskQueue } from '../support/temporal';
import { generateImage, quietRuntime, startHarness, userWithRender, type Harness } from '../imageEdit/harness';
import { seriesValue } from './metricValues';

let h: Harness;
let connection: NativeConnection;
let workflowBundle: WorkflowBundleWithSourceMap;
const running: Array<{ worker: Worker; done: Promise<void> }> = [];

/** Workers as workers/main.ts builds them: the job metrics interceptor bundled in, its sink registered. */
async function startMetricsWorker(taskQueue: string, activities: object): Promise<void> {
  const worker = await Worker.create({ connection, taskQueue, workflowBundle, activities, sinks: jobMetricsSinks() });
  running.push({ worker, done: worker.run() });
}

async function jobSeries(kind: string): Promise<Record<'started' | 'completed' | 'failed' | 'cancelled' | 'inFlight' | 'durations', number>> {
  return {
    started: await seriesValue(jobsStartedTotal, { kind }),
    completed: await seriesValue(jobsCompletedTotal, { kind }),
    failed: await seriesValue(jobsFailedTotal, { kind }),
    cancelled: await seriesValue(jobsCancelledTotal, { kind }),
    inFlight: await seriesValue(jobsInFlight, { kind }),
    durations: await seriesValue(jobDuration, { kind }, '_count'),
  };
}

beforeAll(async () => {
  quietRuntime();
  h = await startHarness('job-metrics', { workers: false });
  connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    workflowInterceptorModules: [JOB_METRICS_INTERCEPTOR_MODULE],
    logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  for (const taskQueue of Object.values(h.queues)) await startMetricsWorker(taskQueue, h.activities);
}, 180_000);

afterAll(async () => {
  for (const { worker } of running) if (worker.getState() === 'RUNNING') worker.shutdown();
  await Promise.all(running.map((r) => r.done));
  await connection?.close();
  await h?.close();
  await closeTestKnex();
});

describe('job metrics in the worker', () => {
  it('count a real image edit as started and completed, with its duration, and the render upload in bytes', async () => {
    const uploadedBefore = await seriesValue(uploadBytesTotal, { kind: 'render' });
    const { user, projectId, renderId } = await userWithRender(h.baseUrl, { width: 320, height: 240 });
    expect(await seriesValue(uploadBytesTotal, { kind: 'render' })).toBeGreaterThan(uploadedBefore + 1000);
    const before = await jobSeries('image_edit');

    const res = await generateImage(h.baseUrl, user, { baseImage: renderId, projectId });

    expect(res.status).toBe(200);
    expect(await jobSeries('image_edit')).toEqual({
      ...before,
      started: before.started + 1,
      completed: before.completed + 1,
      durations: before.durations + 1,
    });
    expect(await seriesValue(jobDuration, { kind: 'image_edit', outcome: 'completed' }, '_sum')).toBeGreaterThan(0);
  }, 120_000);

  describe('with data export activities standing in for the real ones', () => {
    const taskQueue = uniqueTaskQueue('job-metrics-export');
    let release: () => void = () => undefined;

    beforeAll(async () => {
      const result: DataExportResult = { bucket: 'exports', path: 'x.zip', fileName: 'x.zip', sizeBytes: 1, fileCount: 1 };
      await startMetricsWorker(taskQueue, {
        recordDataExport: async () => undefined,
        writeDataExport: async (input: { exportId: string }) => {
          if (input.exportId.startsWith('fail')) throw ApplicationFailure.nonRetryable('the disk is full');
          if (input.exportId.startsWith('hold')) await new Promise<void>((resolve) => (release = resolve));
          return result;
        },
      });
    });

    afterAll(() => release());

    const start = (exportId: string) =>
      h.client.workflow.start(dataExportWorkflow, { taskQueue, workflowId: `job-metrics-${exportId}`, args: [{ exportId, userId: randomUUID(), sequence: 1 }] });

    it('count a failed job as failed, not completed', async () => {
      const before = await jobSeries('data_export');
      const handle = await start(`fail-${randomUUID()}`);
      await expect(handle.result()).rejects.toThrow();
      expect(await jobSeries('data_export')).toEqual({ ...before, started: before.started + 1, failed: before.failed + 1, durations: before.durations + 1 });
    });

    it('hold a running job in flight, and count it as cancelled when it is cancelled', async () => {
      const before = await jobSeries('data_export');
      const handle = await start(`hold-${randomUUID()}`);
      const deadline = Date.now() + 30_000;
      while ((await seriesValue(jobsInFlight, { kind: 'data_export' })) === before.inFlight && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await jobSeries('data_export')).toEqual({ ...before, started: before.started + 1, inFlight: before.inFlight + 1 });

      await handle.cancel();
      await expect(handle.result()).rejects.toThrow();
      expect(await jobSeries('data_export')).toEqual({ ...before, started: before.started + 1, cancelled: before.cancelled + 1, durations: before.durations + 1 });
    });
  });
});
