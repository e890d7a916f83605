'use strict';
/**
 * The test environment (jest.config.js testEnvironment): jest's node environment, with V8's code cache kept for the
 * life of the worker process. jest compiles every module again for every test file (each file gets fresh module
 * instances in a context of its own), and the app, knex, objection, the Temporal client and the AWS SDK are the same
 * code each time. The first compile of a file's code makes its code cache; later compiles of the same code hand it to
 * V8 through `vm.compileFunction`'s `cachedData` option (the code is compared first: V8's own check looks at its
 * length only; a cache V8 still refuses is dropped and the code compiled afresh). Module instances stay per test
 * file: only the compiled code is shared. Measured on groups of API test files: a few percent to a sixth less worker
 * CPU (CHANGELOG.md). Beside it: the process-wide monitors a file started are stopped at its end, and with
 * TEST_CPU_LOG each file's CPU is logged (both below).
 *
 * Loaded once per jest worker, outside the test files' contexts (plain JS: jest loads it without a transform).
 */
const fs = require('node:fs');
const path = require('node:path');
const perfHooks = require('node:perf_hooks');
const vm = require('node:vm');
const { TestEnvironment } = require('jest-environment-node');

const PATCHED = Symbol.for('render-studio.codeCache');

/** What the cache did in this process: read by tests/jest/codeCache.test.ts. */
const stats = { compiled: 0, fromCache: 0, rejected: 0 };

if (!vm[PATCHED]) {
  const compileFunction = vm.compileFunction;
  /** filename → the code compiled under that name and its cache (a file's code is the same in every test file). */
  const caches = new Map();
  vm.compileFunction = function compileWithCodeCache(code, params, options) {
    const filename = options?.filename;
    if (!filename || options.cachedData || options.produceCachedData) return compileFunction.call(this, code, params, options);
    const known = caches.get(filename);
    if (known && known.code === code) {
      const fn = compileFunction.call(this, code, params, { ...options, cachedData: known.cachedData });
      if (fn.cachedDataRejected) {
        stats.rejected += 1;
        caches.delete(filename);
      } else {
        stats.fromCache += 1;
      }
      return fn;
    }
    const fn = compileFunction.call(this, code, params, { ...options, produceCachedData: true });
    stats.compiled += 1;
    // a copy: the Buffer V8 hands back keeps the test file's whole context alive (with every module instance and
    // heap object of that file), which made each jest worker's heap grow by tens of MB per file, to an out-of-memory
    // crash late in a full run
    if (fn.cachedDataProduced && fn.cachedData) caches.set(filename, { code, cachedData: Buffer.from(fn.cachedData) });
    return fn;
  };
  Object.defineProperty(vm, PATCHED, { value: stats });
}

/**
 * Process-wide monitors a test file starts and never stops: prom-client's default metrics (started by every app and
 * worker a file builds) observe GC events with a PerformanceObserver and sample the event loop's delay with an
 * enabled histogram. Both belong to the process, not the file's context, so they outlived the file, kept its whole
 * context alive and went on firing, one more per file. They are tracked from the moment they start, and the file's
 * teardown stops them.
 */
const MONITORS = Symbol.for('render-studio.monitors');
if (!perfHooks[MONITORS]) {
  // on the module: one set per process, also for a copy of this file loaded inside a test (tests/jest/codeCache.test.ts)
  const startedMonitors = new Set();
  const observe = perfHooks.PerformanceObserver.prototype.observe;
  perfHooks.PerformanceObserver.prototype.observe = function observeTracked(...args) {
    startedMonitors.add(() => this.disconnect());
    return observe.apply(this, args);
  };
  const monitorEventLoopDelay = perfHooks.monitorEventLoopDelay;
  perfHooks.monitorEventLoopDelay = function monitorEventLoopDelayTracked(...args) {
    const histogram = monitorEventLoopDelay.apply(this, args);
    startedMonitors.add(() => histogram.disable());
    return histogram;
  };
  Object.defineProperty(perfHooks, MONITORS, { value: startedMonitors });
}

/** Stops what the file that just finished started (above); returns how many. */
function stopMonitors() {
  const startedMonitors = perfHooks[MONITORS];
  const count = startedMonitors.size;
  for (const stop of startedMonitors) stop();
  startedMonitors.clear();
  return count;
}

/**
 * CPU seconds of this process and of its children that ended (ffmpeg, ffprobe, a test's own worker processes), from
 * /proc/self/stat; null where there is no /proc.
 */
function processCpuSeconds() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // the fields after "pid (comm) ": [0] is field 3 (state), utime is field 14, stime 15, cutime 16, cstime 17
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    const ticks = 100; // USER_HZ: 100 on every Linux ABI Node supports
    return { own: (fields[11] + fields[12]) / ticks, children: (fields[13] + fields[14]) / ticks };
  } catch {
    return null;
  }
}

/**
 * With TEST_CPU_LOG set (a file path), each test file appends one JSON line: its path, wall seconds, and the CPU
 * seconds this jest worker spent on it, its own and its ended children's. Chromium, PostgreSQL and the Temporal dev
 * server run outside the workers and are not counted. `node tests/setup/testCpu.js FILE` sums it up.
 */
class ProfiledTestEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    // jest copies the process's globals into each file's context; zod keeps its schema registry (ids to schemas) on
    // globalThis, so a registry made outside jest (playwright-core's bundled zod, loaded by globalSetup when jest runs
    // in band) would collect every file's schemas, and their contexts. Each file's zod makes its own.
    delete this.global.__zod_globalRegistry;
    this.testPath = context.testPath;
    this.rootDir = config.projectConfig.rootDir;
  }

  async setup() {
    if (process.env.TEST_CPU_LOG) this.started = { at: process.hrtime.bigint(), cpu: processCpuSeconds() };
    await super.setup();
  }

  async teardown() {
    stopMonitors();
    await super.teardown();
    const log = process.env.TEST_CPU_LOG;
    const started = this.started;
    if (!log || !started?.cpu) return;
    const ended = processCpuSeconds();
    if (!ended) return;
    const line = {
      file: path.relative(this.rootDir, this.testPath),
      worker: Number(process.env.JEST_WORKER_ID),
      wallS: Number(process.hrtime.bigint() - started.at) / 1e9,
      ownCpuS: Math.round((ended.own - started.cpu.own) * 100) / 100,
      childCpuS: Math.round((ended.children - started.cpu.children) * 100) / 100,
    };
    fs.appendFileSync(log, `${JSON.stringify(line)}\n`);
  }
}

module.exports = ProfiledTestEnvironment;
module.exports.codeCacheStats = () => ({ ...vm[PATCHED] });
module.exports.stopMonitors = stopMonitors;
