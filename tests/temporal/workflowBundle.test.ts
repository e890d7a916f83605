/**
 * The worker's workflow code is bundled in a thread of its own (workers/workflowBundle.ts): the code comes back
 * whole, and a bundling failure comes back as an error naming it, never as a hang or a crash of the process.
 */
import path from 'node:path';
import { bundleWorkflowsInThread } from '../../workers/workflowBundle';
import { JOB_METRICS_INTERCEPTOR_MODULE } from '../../workers/metrics';

describe('bundleWorkflowsInThread', () => {
  it('hands back the bundle of every workflow with the interceptor module, its log lines through the given logger', async () => {
    const lines: string[] = [];
    const { code } = await bundleWorkflowsInThread({
      workflowsPath: require.resolve('../../workflows'),
      workflowInterceptorModules: [JOB_METRICS_INTERCEPTOR_MODULE],
      logLevel: 'INFO',
      logger: { log: (level, message) => void lines.push(`${level} ${message}`) },
    });
    for (const name of ['imageEditWorkflow', 'approvalWorkflow', 'clipGenerationWorkflow', 'JobMetricsInbound']) expect(code).toContain(name);
    // the bundler's own lines came from the thread to the main thread's logger
    expect(lines.some((line) => line.startsWith('INFO '))).toBe(true);
  }, 180_000);

  it('rejects with the bundler error when the workflows cannot be found', async () => {
    await expect(
      bundleWorkflowsInThread({ workflowsPath: path.join(__dirname, 'no-such-workflows.ts'), workflowInterceptorModules: [], logLevel: 'ERROR', logger: { log: () => undefined } }),
    ).rejects.toThrow(/bundling the workflow code failed/);
  }, 60_000);
});
