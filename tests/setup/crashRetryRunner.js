'use strict';
/**
 * The test runner (jest.config.js runner): jest's own, with one addition for a crash of the jest worker process
 * itself. Node 20 aborts a process when it finds its async-hooks id stack unbalanced after a native callback
 * ("Assertion failed: (env_->execution_async_id()) == (0)" in InternalCallbackScope::Close, then SIGABRT). In this
 * suite it has hit a jest worker about once in two full runs, each time in a different file that runs a Temporal
 * worker in the test process (the native bridge's thread-safe callbacks), never in the same file twice, and the file
 * passed on its own afterwards. The cause found: a workflow activation on the test thread (debugMode) stalled past the
 * SDK's 5 s execution timeout on a busy machine; the timeout interrupting the vm's microtasks unbalances the stack
 * (tests/jest/slowActivation.test.ts reproduces it), and tests/setup/temporalWorker.ts now gives in-thread workflows
 * 60 s. This runner stays for an abort of another cause. jest-worker already runs a file again in a new process when its worker exits with a
 * non-zero code; a worker killed by a signal it reports as a failure of the file instead. This runner treats a
 * SIGABRT like that exit: the file is run once more, in a fresh worker, after the others, with a line on stderr
 * naming it. A file whose worker aborts again fails as before, and a test that fails is never run again.
 *
 * Plain JS: jest loads a runner without a transform.
 */
const path = require('node:path');
const TestRunner = require('jest-runner').default;

const WORKER_ABORTED = /A jest worker process \(pid=\d+\) was terminated by another process: signal=SIGABRT/;

/** Whether a file's failure is its worker process dying of SIGABRT (not a test failing). */
function isWorkerAbort(error) {
  return WORKER_ABORTED.test(String(error && error.message));
}

class CrashRetryRunner extends TestRunner {
  /** the files whose worker aborted, by path, to run once more */
  #aborted = new Map();
  #retrying = false;

  on(eventName, listener) {
    if (eventName !== 'test-file-failure') return super.on(eventName, listener);
    return super.on(eventName, (args) => {
      const [test, error] = args;
      if (!this.#retrying && isWorkerAbort(error)) {
        this.#aborted.set(test.path, test);
        return undefined;
      }
      return listener(args);
    });
  }

  async runTests(tests, watcher, options) {
    await super.runTests(tests, watcher, options);
    if (this.#aborted.size === 0 || watcher.isInterrupted()) return;
    const again = [...this.#aborted.values()];
    this.#aborted.clear();
    for (const test of again) {
      process.stderr.write(`\n${path.relative(process.cwd(), test.path)}: its jest worker process was killed by SIGABRT (a native abort, not a failing test); running the file once more in a new worker\n`);
    }
    this.#retrying = true;
    try {
      await super.runTests(again, watcher, options);
    } finally {
      this.#retrying = false;
    }
  }
}

module.exports = CrashRetryRunner;
module.exports.isWorkerAbort = isWorkerAbort;
