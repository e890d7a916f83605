/**
 * The workflow code bundled in a thread of its own. bundleWorkflowCode in the main thread left webpack and its
 * caches live on the heap after it returned (74 MB used against 38 before it), and the main thread is the one
 * that also runs the activities: every garbage collection walks that heap, and the media activities, whose
 * large image buffers make V8 collect often, ran measurably slower for it. In a thread, all of it goes when the
 * thread ends; the main thread keeps the bundle's code, a string of about 4 MB on the heap (a heap snapshot's
 * figure) that every worker shares.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker as Thread } from 'node:worker_threads';
import { bundleWorkflowCode, type LogLevel, type Logger } from '@temporalio/worker';
import { JOB_METRICS_INTERCEPTOR_MODULE } from './metrics';

export interface WorkflowBundleSource {
  workflowsPath: string;
  workflowInterceptorModules: string[];
}

/** The workflow side of tracing (services/platform/tracing.ts): acts only for runs a traced client started. */
export const TRACING_INTERCEPTOR_MODULE = require.resolve('../workflows/tracingInterceptors');

/** What the worker bundles: the app's workflows with the job metrics interceptor (workers/metrics.ts) and tracing's. */
export function workerBundleSource(): WorkflowBundleSource {
  return { workflowsPath: require.resolve('../workflows'), workflowInterceptorModules: [JOB_METRICS_INTERCEPTOR_MODULE, TRACING_INTERCEPTOR_MODULE] };
}

/**
 * Bundles `source` into `file` (for WORKFLOW_BUNDLE_PATH), written beside and renamed: a worker starting meanwhile
 * reads the old bundle or the new one, never half of one. Returns the code's size in bytes.
 */
export async function writeWorkflowBundle(file: string, source: WorkflowBundleSource, logger?: Logger): Promise<number> {
  const { code } = await bundleWorkflowCode({ ...source, ...(logger ? { logger } : {}) });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  fs.writeFileSync(partial, code);
  fs.renameSync(partial, file);
  return code.length;
}

// plain JavaScript: webpack compiles the TypeScript workflows itself, so the thread needs no loader
const THREAD_BOOT = `
const { parentPort, workerData } = require('node:worker_threads');
const { bundleWorkflowCode, DefaultLogger } = require(workerData.temporalWorker);
// the bundler's lines go to the main thread's logger
const forward = ({ level, message, meta }) => {
  try {
    parentPort.postMessage({ log: { level, message, meta } });
  } catch {
    parentPort.postMessage({ log: { level, message } });
  }
};
bundleWorkflowCode({
  workflowsPath: workerData.workflowsPath,
  workflowInterceptorModules: workerData.workflowInterceptorModules,
  logger: new DefaultLogger(workerData.logLevel, forward),
}).then(
  (bundle) => parentPort.postMessage({ code: bundle.code }),
  (err) => parentPort.postMessage({ error: (err && err.stack) || String(err) }),
);
`;

export interface WorkflowBundleOptions {
  workflowsPath: string;
  workflowInterceptorModules: string[];
  /** the least level of the bundler's lines that reach `logger` */
  logLevel: LogLevel;
  logger: Pick<Logger, 'log'>;
}

/**
 * bundleWorkflowCode's result, made in a worker thread. It settles once the thread has ended, so webpack's memory
 * is gone by then and no thread outlives the call.
 */
export function bundleWorkflowsInThread(options: WorkflowBundleOptions): Promise<{ code: string }> {
  return new Promise((resolve, reject) => {
    const { logger, ...data } = options;
    const thread = new Thread(THREAD_BOOT, {
      eval: true,
      execArgv: [],
      // the package's own main file by path: inside jest, '@temporalio/worker' maps to the quiet-logs wrapper
      // (tests/setup/temporalWorker.ts), TypeScript the plain thread cannot load
      workerData: { ...data, temporalWorker: require.resolve('@temporalio/worker/lib/index.js') },
    });
    let outcome: { code: string } | Error | undefined;
    thread.on('message', (message: { code?: string; error?: string; log?: { level: LogLevel; message: string; meta?: Record<string, unknown> } }) => {
      if (message.log) {
        logger.log(message.log.level, message.log.message, message.log.meta);
        return;
      }
      outcome = typeof message.code === 'string' ? { code: message.code } : new Error(`bundling the workflow code failed: ${message.error ?? 'no code'}`);
      void thread.terminate();
    });
    thread.once('error', (err) => {
      outcome ??= err;
    });
    thread.once('exit', (exitCode) => {
      if (outcome === undefined) reject(new Error(`the workflow bundling thread exited (${exitCode}) before handing over the code`));
      else if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    });
  });
}
