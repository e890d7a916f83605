/**
 * What `@temporalio/worker` resolves to inside jest (jest.config.js moduleNameMapper), for test files and for the
 * packages they use (@temporalio/testing). It is the real SDK with two changes, so `npm test` prints jest's
 * results rather than thousands of worker lines:
 * - the process's Temporal Runtime is installed with a logger that writes the SDK's lines (worker state changes,
 *   and the Rust core's warnings, forwarded) to this test file's log (tests/setup/testLogs.js);
 * - bundleWorkflowCode's default logger (webpack's bundle report) writes there too.
 * A test file that installs a Runtime of its own finds it installed and keeps this one (tests/imageEdit/harness.ts).
 * When a test fails, tests/setup/logReporter.js prints the log's path and its last warnings and errors.
 */
import fs from 'node:fs';
import path from 'node:path';
import type * as TemporalWorker from '@temporalio/worker/lib/index';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { logFileFor } = require('./testLogs');
// the real package (its main file by path, which the mapper does not catch)
// eslint-disable-next-line @typescript-eslint/no-require-imports
const real: typeof TemporalWorker = require(path.join(__dirname, '..', '..', 'node_modules', '@temporalio', 'worker', 'lib', 'index.js'));

function currentTestPath(): string {
  const state = (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect?.getState?.();
  return state?.testPath ?? path.join(__dirname, `jest-worker-${process.env.JEST_WORKER_ID ?? process.pid}`);
}

const logFile: string = logFileFor(currentTestPath());
let folderMade = false;

function write(level: string, message: string, meta?: Record<string, unknown>): void {
  if (!folderMade) {
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    folderMade = true;
  }
  let details = '';
  if (meta && Object.keys(meta).length > 0) {
    try {
      details = ` ${JSON.stringify(meta)}`;
    } catch {
      details = ' [meta not serialisable]';
    }
  }
  fs.appendFileSync(logFile, `${new Date().toISOString()} [${level}] ${message}${details}\n`);
}

/** The SDK's log lines, INFO and up, into the test file's log. */
const testLogger = new real.DefaultLogger('INFO', ({ level, message, meta }) => write(level, message, meta as Record<string, unknown> | undefined));

try {
  real.Runtime.install({
    logger: testLogger,
    // the Rust core's lines are forwarded to the logger above instead of printed on stderr
    telemetryOptions: { logging: { forward: {}, filter: real.makeTelemetryFilterString({ core: 'INFO', other: 'WARN' }) } },
  });
} catch {
  // this module registry's Runtime was installed already: keep it
}

const bundleWorkflowCode: typeof real.bundleWorkflowCode = (options) => real.bundleWorkflowCode({ logger: testLogger, ...options });

module.exports = { ...real, bundleWorkflowCode };
