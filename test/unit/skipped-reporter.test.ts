/**
 * `npm test` names every skipped test with its reason after the summary: a Jest run of a fixture
 * with one skipped test, through the real jest.config.js, prints it.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

test('a skipped test is named, with its reason, after the summary', async () => {
  const { default: config } = (await import(
    pathToFileURL(path.resolve('jest.config.js')).href
  )) as {
    default: { projects: Record<string, unknown>[]; reporters: unknown };
  };
  // The unit project's settings (no MySQL), with the real reporters, on the fixture alone.
  const { displayName: _unit, ...unit } = config.projects[0] ?? {};
  const fixture = {
    ...unit,
    reporters: config.reporters,
    rootDir: path.resolve('.'),
    testMatch: ['<rootDir>/test/fixtures/skipped.fixture.ts'],
  };
  const run = spawnSync(
    process.execPath,
    [
      '--experimental-vm-modules',
      'node_modules/jest/bin/jest.js',
      '--config',
      JSON.stringify(fixture),
    ],
    { encoding: 'utf8', env: { ...process.env, CI: '' } },
  );
  expect(run.status).toBe(0);
  expect(run.stderr).toMatch(/Tests: +1 skipped, 1 passed, 2 total/);
  expect(run.stderr).toContain(
    'Skipped (1), not run:\n  test/fixtures/skipped.fixture.ts › needs a frobnicator (skipped: no frobnicator installed)\n',
  );
}, 60_000);
