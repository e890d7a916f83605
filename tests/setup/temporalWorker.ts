/**
 * What `@temporalio/worker` resolves to inside jest (jest.config.js moduleNameMapper), for test files and for the
 * packages they use (@temporalio/testing). It is the real SDK with two changes, so `npm test` prints jest's
 * results rather than thousands of worker lines:
 * - the Temporal Runtime, when something first needs it, logs the SDK's lines (worker state changes, and the Rust
 *   core's warnings, forwarded) to this test file's log (tests/setup/testLogs.js), also when a test installs its own;
 * - bundleWorkflowCode's default logger (webpack's bundle report) writes there too, and so does a DefaultLogger made
 *   without a log function (MockActivityEnvironment's: its activities' failures).
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

/** The SDK's logging in tests: its lines and the Rust core's (forwarded instead of printed on stderr) go to the log. */
const testLogging: TemporalWorker.RuntimeOptions = {
  logger: testLogger,
  telemetryOptions: { logging: { forward: {}, filter: real.makeTelemetryFilterString({ core: 'INFO', other: 'WARN' }) } },
};

// the Runtime a Worker, a connection or a test environment creates when it first needs one (nothing is started here)
real.Runtime.defaultOptions = testLogging;
// a test that installs a Runtime of its own (tests/imageEdit/harness.ts) keeps its other options, with the test logging
const install = real.Runtime.install.bind(real.Runtime);
real.Runtime.install = (options: TemporalWorker.RuntimeOptions = {}) =>
  install({ ...options, logger: testLogging.logger, telemetryOptions: { ...options.telemetryOptions, logging: testLogging.telemetryOptions!.logging } });

const bundleWorkflowCode: typeof real.bundleWorkflowCode = (options) => real.bundleWorkflowCode({ logger: testLogger, ...options });

/**
 * A DefaultLogger made without a log function (e.g. @temporalio/testing's MockActivityEnvironment, whose activity
 * failures are logged at WARN) writes to the test file's log instead of console.error.
 */
class DefaultLogger extends real.DefaultLogger {
  constructor(level?: TemporalWorker.LogLevel, logFunction?: ConstructorParameters<typeof real.DefaultLogger>[1]) {
    super(level, logFunction ?? (({ level: l, message, meta }) => write(l, message, meta as Record<string, unknown> | undefined)));
  }
}

/**
 * Workers run their workflows on the test file's own thread (the SDK's `debugMode`) unless a test asks otherwise: a
 * worker thread per Worker loaded the bundle and the SDK's protobuf definitions again, for each of the hundreds of
 * Workers a run creates. The deadlock detection debugMode turns off is turned back on, at 60 s rather than the SDK's
 * 5 s (`isolateExecutionTimeout` is not in the public options' type, but the SDK's option compiler takes it over its
 * default): on this thread a firing timeout does not just fail the workflow task. It interrupts the vm's microtasks
 * (`microtaskMode: 'afterEvaluate'`) inside a native callback, Node 20 leaves the async-id stack unbalanced, and the
 * next native callback aborts the process ("Assertion failed: (env_->execution_async_id()) == (0)", SIGABRT). A busy
 * machine stalls an ordinary activation past 5 s now and then, which is how jest workers died in full runs;
 * tests/jest/slowActivation.test.ts shows it. A real deadlock (a loop that never yields) still ends, at 60 s.
 */
const IN_THREAD_ISOLATE_EXECUTION_TIMEOUT = '60s';

class Worker extends real.Worker {
  static override create(options: TemporalWorker.WorkerOptions): Promise<Worker> {
    const inTestThread: TemporalWorker.WorkerOptions & { isolateExecutionTimeout: string } = {
      debugMode: true,
      isolateExecutionTimeout: IN_THREAD_ISOLATE_EXECUTION_TIMEOUT,
      ...options,
    };
    return super.create(inTestThread) as Promise<Worker>;
  }
}

module.exports = { ...real, DefaultLogger, bundleWorkflowCode, Worker };
