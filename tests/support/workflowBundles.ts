/**
 * Workflow bundles for workers that run in processes of their own, built once per run: the first test file that asks
 * writes it to the run's log folder, the later ones (on either jest worker) load that file instead of running webpack
 * again.
 *
 * - shortHeartbeatBundle(): the app's workflows with tests/support/workflows/shortHeartbeats.ts, for the test workers
 *   the crash tests kill (tests/clips/support/clipWorkerProcess.ts);
 * - workerBundle(): what the real worker entry bundles (workers/workflowBundle.ts's workerBundleSource), for the
 *   workers that `npm start` and `npm run start:scaled` run (their WORKFLOW_BUNDLE_PATH), optionally with short
 *   heartbeats too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { workerBundleSource, writeWorkflowBundle, type WorkflowBundleSource } from '../../workers/workflowBundle';

const SHORT_HEARTBEATS = require.resolve('./workflows/shortHeartbeats');

const building = new Map<string, Promise<string>>();

function runBundle(name: string, source: WorkflowBundleSource): Promise<string> {
  let built = building.get(name);
  if (!built) {
    built = (async () => {
      const main = process.env.TEST_WORKFLOW_BUNDLE_PATH;
      if (!main) throw new Error('TEST_WORKFLOW_BUNDLE_PATH is not set: globalSetup builds it from workflows/index.ts');
      // in the run's log folder (tests/setup/testLogs.js removes it with the run's logs)
      const dir = process.env.TEST_LOG_DIR ?? path.dirname(main);
      const file = path.join(dir, `workflow-bundle-${name}.js`);
      if (!fs.existsSync(file)) await writeWorkflowBundle(file, source);
      return file;
    })();
    building.set(name, built);
  }
  return built;
}

/** The app's workflows with short heartbeat timeouts, for test workers (tests/clips/support/clipWorker.ts). */
export function shortHeartbeatBundle(): Promise<string> {
  return runBundle('short-heartbeats', { workflowsPath: require.resolve('../../workflows'), workflowInterceptorModules: [SHORT_HEARTBEATS] });
}

/** The real worker's bundle, for WORKFLOW_BUNDLE_PATH of workers/main.ts; with `shortHeartbeats` for a worker a test kills. */
export function workerBundle(options: { shortHeartbeats?: boolean } = {}): Promise<string> {
  const source = workerBundleSource();
  if (!options.shortHeartbeats) return runBundle('worker', source);
  return runBundle('worker-short-heartbeats', { ...source, workflowInterceptorModules: [...source.workflowInterceptorModules, SHORT_HEARTBEATS] });
}
