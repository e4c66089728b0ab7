import { nestsDeeperThan } from '../../../src/http/body-guards.js';

describe('nestsDeeperThan', () => {
  const arrays = (levels: number) => JSON.parse('['.repeat(levels) + ']'.repeat(levels));

  test.each([
    [null, 0, false],
    ['text', 0, false],
    [{}, 1, false],
    [{}, 0, true],
    [[{ a: [1] }], 3, false],
    [[{ a: [1] }], 2, true],
    [{ a: 1, b: { c: { d: [] } } }, 4, false],
    [{ a: 1, b: { c: { d: [] } } }, 3, true],
  ])('%j deeper than %d: %s', (value, limit, expected) => {
    expect(nestsDeeperThan(value, limit)).toBe(expected);
  });

  test('any depth, without recursion', () => {
    expect(nestsDeeperThan(arrays(64), 64)).toBe(false);
    expect(nestsDeeperThan(arrays(65), 64)).toBe(true);
    expect(nestsDeeperThan(arrays(200_000), 64)).toBe(true);
  });
});
