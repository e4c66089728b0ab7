/**
 * `testIf(condition, reason)`: Jest's `test` when the condition holds, else a skipped test whose
 * name carries the reason, which test/helpers/skipped-reporter.js lists at the end of the run.
 */
type TestFn = Parameters<typeof test>[1];

export function testIf(condition: boolean, reason: string) {
  return (name: string, fn: TestFn, timeout?: number): void => {
    if (condition) test(name, fn, timeout);
    else test.skip(`${name} (skipped: ${reason})`, fn, timeout);
  };
}
