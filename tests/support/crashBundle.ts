/**
 * The app's workflows bundled with tests/support/workflows/shortHeartbeats.ts, for the workers the crash tests kill
 * (tests/clips/support/clipWorkerProcess.ts): built once per test file, beside the run's own bundle.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

let built: Promise<string> | null = null;

/** The bundle's path, for the worker's WORKFLOW_BUNDLE_PATH. */
export function shortHeartbeatBundle(): Promise<string> {
  built ??= (async () => {
    const main = process.env.WORKFLOW_BUNDLE_PATH;
    if (!main) throw new Error('WORKFLOW_BUNDLE_PATH is not set: globalSetup builds it from workflows/index.ts');
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('../../workflows'),
      workflowInterceptorModules: [require.resolve('./workflows/shortHeartbeats')],
    });
    // in the run's log folder (tests/setup/testLogs.js removes it with the run's logs)
    const dir = process.env.TEST_LOG_DIR ?? path.dirname(main);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `workflow-bundle-short-heartbeats-${process.pid}.js`);
    fs.writeFileSync(file, code);
    return file;
  })();
  return built;
}
