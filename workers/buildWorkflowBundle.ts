/**
 * `npm run build:workflows -- <file>`: the worker's workflow bundle (workers/workflowBundle.ts's workerBundleSource),
 * written to <file> (default .data/workflow-bundle.js). A worker started with WORKFLOW_BUNDLE_PATH=<file> loads it
 * instead of running webpack at start. Build it from the same checkout as the worker runs, again after any change.
 */
import path from 'node:path';
import { workerBundleSource, writeWorkflowBundle } from './workflowBundle';

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? path.join(__dirname, '..', '.data', 'workflow-bundle.js'));
  const bytes = await writeWorkflowBundle(out, workerBundleSource(), { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error });
  process.stdout.write(`workflow bundle: ${out} (${Math.round(bytes / 1024)} KiB)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
