import vm from 'node:vm';
// the environment module itself (plain JS): its stats are those of the patch jest installed in this worker
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { codeCacheStats } = require('../setup/testEnvironment') as { codeCacheStats: () => { compiled: number; fromCache: number; rejected: number } };

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
