'use strict';
/**
 * The test environment (jest.config.js testEnvironment): jest's node environment, with V8's code cache kept for the
 * life of the worker process. jest compiles every module again for every test file (each file gets fresh module
 * instances in a context of its own), and the app, knex, objection, the Temporal client and the AWS SDK are the same
 * code each time. The first compile of a file's code makes its code cache; later compiles of the same code hand it to
 * V8 through `vm.compileFunction`'s `cachedData` option (the code is compared first: V8's own check looks at its
 * length only; a cache V8 still refuses is dropped and the code compiled afresh). Module instances stay per test
 * file: only the compiled code is shared. Measured on groups of API test files: a few percent to a sixth less worker
 * CPU (CHANGELOG.md).
 *
 * Loaded once per jest worker, outside the test files' contexts (plain JS: jest loads it without a transform).
 */
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
    if (fn.cachedDataProduced && fn.cachedData) caches.set(filename, { code, cachedData: fn.cachedData });
    return fn;
  };
  Object.defineProperty(vm, PATCHED, { value: stats });
}

module.exports = TestEnvironment;
module.exports.codeCacheStats = () => ({ ...vm[PATCHED] });
