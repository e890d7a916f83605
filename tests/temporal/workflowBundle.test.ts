/**
 * The worker's workflow code is bundled in a thread of its own (workers/workflowBundle.ts): the code comes back
 * whole, and a bundling failure comes back as an error naming it, never as a hang or a crash of the process.
 */
import path from 'node:path';
import { bundleWorkflowsInThread } from '../../workers/workflowBundle';
import { JOB_METRICS_INTERCEPTOR_MODULE } from '../../workers/metrics';

describe('bundleWorkflowsInThread', () => {
  it('hands back the bundle of every workflow with the interceptor module', async () => {
    const { code } = await bundleWorkflowsInThread({
      workflowsPath: require.resolve('../../workflows'),
      workflowInterceptorModules: [JOB_METRICS_INTERCEPTOR_MODULE],
      logLevel: 'WARN',
    });
    for (const name of ['imageEditWorkflow', 'approvalWorkflow', 'clipGenerationWorkflow', 'JobMetricsInbound']) expect(code).toContain(name);
  }, 180_000);

  it('rejects with the bundler error when the workflows cannot be found', async () => {
    await expect(
      bundleWorkflowsInThread({ workflowsPath: path.join(__dirname, 'no-such-workflows.ts'), workflowInterceptorModules: [], logLevel: 'ERROR' }),
    ).rejects.toThrow(/bundling the workflow code failed/);
  }, 60_000);
});
