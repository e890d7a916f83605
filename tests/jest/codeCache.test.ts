import vm from 'node:vm';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
// the environment module itself (plain JS): its stats are those of the patch jest installed in this worker
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { codeCacheStats, stopMonitors } = require('../setup/testEnvironment') as {
  codeCacheStats: () => { compiled: number; fromCache: number; rejected: number };
  stopMonitors: () => number;
};

describe("the test environment's code cache", () => {
  it('is installed in the worker that runs this file', () => {
    expect(codeCacheStats()).toEqual({ compiled: expect.any(Number), fromCache: expect.any(Number), rejected: expect.any(Number) });
    // this file and its imports were compiled through it
    expect(codeCacheStats().compiled).toBeGreaterThan(0);
  });

  it('compiles a file once and serves the same code again from its cache, with the same behaviour', () => {
    const filename = `/virtual/codeCache-${process.pid}-${Date.now()}.js`;
    const code = 'return a * 2 + (function inner(x) { return x + 1; })(a);';
    const before = codeCacheStats();
    const first = vm.compileFunction(code, ['a'], { filename });
    const again = vm.compileFunction(code, ['a'], { filename });
    const after = codeCacheStats();
    expect(after.compiled - before.compiled).toBe(1);
    expect(after.fromCache - before.fromCache).toBe(1);
    expect(first(3)).toBe(10);
    expect(again(3)).toBe(10);
    expect(again).not.toBe(first);
  });

  it('compiles changed code under the same name afresh', () => {
    const filename = `/virtual/codeCache-changed-${process.pid}-${Date.now()}.js`;
    vm.compileFunction('return 1;', [], { filename });
    const before = codeCacheStats();
    const changed = vm.compileFunction('return 2;', [], { filename });
    const after = codeCacheStats();
    expect(after.compiled - before.compiled).toBe(1);
    expect(after.fromCache - before.fromCache).toBe(0);
    expect(changed()).toBe(2);
  });

  it("leaves a caller's own cache options alone", () => {
    const filename = `/virtual/codeCache-own-${process.pid}-${Date.now()}.js`;
    const produced = vm.compileFunction('return 3;', [], { filename, produceCachedData: true });
    expect(produced.cachedDataProduced).toBe(true);
    const reused = vm.compileFunction('return 3;', [], { filename, cachedData: produced.cachedData });
    expect(reused.cachedDataRejected).toBe(false);
    expect(reused()).toBe(3);
  });
});

/** V8's collector, reached without --expose-gc: the flag set at run time, the function taken from a new context. */
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

describe("the code cache and a test file's context", () => {
  it('keeps nothing of the context a cached file was compiled in, so a finished file can be collected', async () => {
    const filename = `/virtual/codeCache-context-${process.pid}-${Date.now()}.js`;
    const before = codeCacheStats();
    const contextRef = ((): WeakRef<object> => {
      // as jest compiles a module: in the test file's own context, with nothing asked of the cache
      const context = vm.createContext({ big: new Array(1000).fill('held') });
      const fn = vm.compileFunction('return typeof big;', [], { filename, parsingContext: context });
      expect(fn()).toBe('object');
      return new WeakRef(context);
    })();
    expect(codeCacheStats().compiled - before.compiled).toBe(1);
    for (let i = 0; i < 5 && contextRef.deref() !== undefined; i += 1) {
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
    }
    expect(contextRef.deref()).toBeUndefined();
  });
});

describe("the process-wide monitors a test file starts", () => {
  it('are stopped by the environment: the GC observer and the event-loop delay histogram of the metrics', async () => {
    // what prom-client's default metrics start with every app a file builds
    let gcEvents = 0;
    const observer = new PerformanceObserver(() => {
      gcEvents += 1;
    });
    observer.observe({ entryTypes: ['gc'] });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    expect(stopMonitors()).toBeGreaterThanOrEqual(2);
    // disable() answers false for a histogram that was no longer enabled
    expect(delay.disable()).toBe(false);
    collectGarbage();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(gcEvents).toBe(0);
  });
});
