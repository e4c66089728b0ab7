/**
 * slices.ts runInSlices: builds that run at once share one slice per turn of the event loop
 * (DESCRIPTION_SLICE_MS, 2 ms) rather than taking one each, and each still takes a step per
 * turn. On a clock that only the steps move (a millisecond each), so the order of the steps
 * tells the turns apart without timing anything.
 */
import { afterAll, describe, expect, jest, test } from '@jest/globals';
import { DESCRIPTION_SLICE_MS } from '../../src/limits.js';
import { runInSlices } from '../../src/slices.js';

let clock = 1_000;
const now = jest.spyOn(performance, 'now').mockImplementation(() => clock);
afterAll(() => now.mockRestore());

/** `count` steps of 1 ms each, each logged by `name`. */
function* steps(name: string, count: number, log: string[]): Generator<void, string> {
  for (let i = 0; i < count; i++) {
    clock += 1;
    log.push(name);
    yield;
  }
  return name;
}

describe('runInSlices', () => {
  test('two builds at once share a slice per turn, each taking a step in every turn', async () => {
    expect(DESCRIPTION_SLICE_MS).toBe(2);
    const log: string[] = [];
    let turning = true;
    const turn = () => {
      log.push('|');
      if (turning) setImmediate(turn);
    };
    setImmediate(turn);
    const done = await Promise.all([
      runInSlices(steps('a', 6, log)),
      runInSlices(steps('b', 6, log)),
    ]);
    turning = false;
    expect(done).toEqual(['a', 'b']);
    // Turn by turn, the steps of both: 2 ms of a, then 1 of b (each one a slice of its own, as
    // before, would give a a b b in every turn). The first turn gave b a slice as it began, and
    // b alone has the whole slice once a is done.
    const turns = log
      .join('')
      .split('|')
      .filter((steps) => steps !== '');
    expect(turns).toEqual(['aabb', 'aab', 'aab', 'bb']);
  });
});
