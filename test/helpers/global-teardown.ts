/**
 * Stops the private server or container global-setup started, if any, and removes the run's
 * temporary directory, naming what tests left in it (a test that does not clean up after
 * itself is a bug to fix, though the run leaves nothing behind either way).
 */
import { readdir, rm } from 'node:fs/promises';

const state = globalThis as typeof globalThis & {
  tablegateTestCleanup?: () => Promise<unknown>;
  tablegateTestTemporary?: string;
};

export default async function globalTeardown(): Promise<void> {
  // Called once per tier that names it (jest.config.js), after every test: the first call ends it.
  const cleanup = state.tablegateTestCleanup;
  const root = state.tablegateTestTemporary;
  state.tablegateTestCleanup = undefined;
  state.tablegateTestTemporary = undefined;
  await cleanup?.();
  if (root === undefined) return;
  // jest_<uid>: Jest's own transform cache, put under TMPDIR by the workers started after setup.
  const left = (await readdir(root).catch(() => [])).filter((name) => !/^jest_\w+$/.test(name));
  if (left.length > 0) {
    process.stdout.write(
      `\ntests left ${left.length} temporary entries: ${left.slice(0, 10).join(', ')}\n`,
    );
  }
  await rm(root, { recursive: true, force: true });
}
