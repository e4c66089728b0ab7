/**
 * Jest runs the TypeScript sources as native ESM through SWC (no type checking here:
 * `npm run typecheck` does that). Three tiers and the cluster files: `unit` (pure logic, no MySQL, seconds),
 * `integration` (a real MySQL server found or started by the global setup, the gateway over
 * HTTP, the browser test) and `fuzz` (the fuzz and property suites, pure and against MySQL: a
 * fixed seed under CI=true, see test/helpers/fuzz-seed.ts). `npm test` runs all three,
 * then the cluster files one at a time; `npm run test:unit`, `test:integration`, `test:fuzz` and
 * `test:cluster` one each.
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

/** The files that start a Galera cluster (test/helpers/private-servers.ts startGaleraCluster). */
const CLUSTER = [
  '/test/integration/galera-node.test.ts',
  '/test/integration/changes-failover.test.ts',
  '/test/integration/webhooks-failover.test.ts',
  '/test/integration/read-consistency.test.ts',
];

export default {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/{integration,browser}/**/*.test.ts'],
      testPathIgnorePatterns: CLUSTER,
      ...withMysql,
    },
    // The Galera files start clusters of private servers and kill nodes on a clock: beside
    // another file on two loaded cores a cluster's start ran past its 180 s hook. `npm test`
    // runs them after the rest, one at a time (`npm run test:cluster`).
    { ...shared, displayName: 'cluster', testMatch: CLUSTER.map((f) => `<rootDir>${f}`), ...withMysql },
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
