/**
 * A Jest reporter that names every skipped test at the end of the run, with the reason that
 * test/helpers/skip.ts puts in its name, so a test that did not run is never silent in `npm test`
 * (Jest's own summary only counts them).
 */
import path from 'node:path';

const SKIPPED = new Set(['pending', 'skipped', 'todo', 'disabled']);

export default class SkippedReporter {
  /** @param {{ rootDir: string, testNamePattern?: string }} globalConfig */
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    // With -t, every test the pattern leaves out counts as skipped: that list says nothing.
    this.filtered = Boolean(globalConfig.testNamePattern);
  }

  /**
   * @param {unknown} _contexts
   * @param {{ testResults: { testFilePath: string, testResults: { status: string, fullName: string }[] }[] }} results
   */
  onRunComplete(_contexts, results) {
    if (this.filtered) return;
    const lines = results.testResults.flatMap((file) =>
      file.testResults
        .filter((test) => SKIPPED.has(test.status))
        .map((test) => `  ${path.relative(this.rootDir, file.testFilePath)} › ${test.fullName}`),
    );
    if (lines.length === 0) return;
    process.stderr.write(`\nSkipped (${lines.length}), not run:\n${lines.join('\n')}\n`);
  }
}
