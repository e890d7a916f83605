/**
 * The harness's workers (tests/imageEdit/harness.ts startWorkers: one per queue, the run's bundle, the harness's
 * activities) with one worker option changed: heartbeats are sent to the server as the activity records them, instead
 * of at most once per 0.8 x the heartbeat timeout (16 s for the draft model run's 20 s). Temporal tells a running
 * activity of a cancel only in the answer to a heartbeat, so a cancel reaches the activity at its next heartbeat
 * (runDraftModel records one every 5 s) rather than up to 16 s later. The workflows, their timeouts and the
 * activities are the app's own.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { quietRuntime, type Harness, type RunningWorkers } from '../imageEdit/harness';

/** Below runDraftModel's own 5 s between heartbeats: every heartbeat it records is sent at once. */
const HEARTBEAT_THROTTLE = '500 ms';

export async function startPromptCancelWorkers(h: Pick<Harness, 'queues' | 'activities'>): Promise<RunningWorkers> {
  const bundlePath = process.env.TEST_WORKFLOW_BUNDLE_PATH;
  if (!bundlePath) throw new Error('TEST_WORKFLOW_BUNDLE_PATH is not set: globalSetup builds it from workflows/index.ts');
  quietRuntime();
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const workers = await Promise.all(
    Object.values(h.queues).map((taskQueue) =>
      Worker.create({
        connection,
        taskQueue,
        workflowBundle: { codePath: bundlePath },
        activities: h.activities,
        maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
      }),
    ),
  );
  const running = workers.map((worker) => worker.run());
  return {
    stop: async () => {
      for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
      await Promise.all(running);
      await connection.close();
    },
  };
}
