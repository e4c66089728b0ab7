/**
 * Jest runs the TypeScript sources as native ESM through SWC (no type checking here:
 * `npm run typecheck` does that). Two tiers: `unit` (pure logic, no MySQL, seconds) and
 * `integration` (a real MySQL server found or started by the global setup, the gateway over
 * HTTP, the browser test). `npm test` runs both; `npm run test:unit` only the first.
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

export default {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/{integration,browser}/**/*.test.ts'],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
    },
  ],
  // A skipped test is named, with its reason, after the summary.
  reporters: ['default', '<rootDir>/test/helpers/skipped-reporter.js'],
  testTimeout: 30000,
};
