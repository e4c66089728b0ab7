/**
 * Jest runs the TypeScript sources as native ESM through SWC (no type checking here:
 * `npm run typecheck` does that). Three tiers: `unit` (pure logic, no MySQL, seconds),
 * `integration` (a real MySQL server found or started by the global setup, the gateway over
 * HTTP, the browser test) and `fuzz` (the fuzz and property suites, pure and against MySQL: a
 * fixed seed under CI=true, see test/helpers/fuzz-seed.ts). `npm test` runs all three;
 * `npm run test:unit`, `test:integration` and `test:fuzz` one each.
 */
const shared = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } },
    ],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

/** The integration and fuzz tiers find (or start) one MySQL server for the run. */
const withMysql = {
  globalSetup: '<rootDir>/test/helpers/global-setup.ts',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
};

export default {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/{integration,browser}/**/*.test.ts'],
      ...withMysql,
    },
    { ...shared, displayName: 'fuzz', testMatch: ['<rootDir>/test/fuzz/**/*.test.ts'], ...withMysql },
  ],
  // One worker per core, not in band (jest's default here: cores − 1 = 1 worker, the run the sum
  // of every file's time): the integration files mostly wait (on MySQL, on the gateways they
  // start; a file's own process used 4–27 % of a core), so two halve the run. Four on a 2-core
  // machine shared with other test runs overloaded it (timeouts, and MariaDB's 151 connections
  // used up).
  maxWorkers: '100%',
  // A skipped test is named, with its reason, after the summary.
  reporters: ['default', '<rootDir>/test/helpers/skipped-reporter.js'],
  testTimeout: 30000,
};
