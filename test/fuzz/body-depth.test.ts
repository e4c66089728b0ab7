/**
 * The body nesting guard (http/body-guards.ts) on 20,000 random JSON values and limits, against
 * the definition of depth (a fixed seed of its own). Its examples are in
 * test/unit/http/body-guards.test.ts.
 */
import { describe, expect, test } from '@jest/globals';
import { nestsDeeperThan } from '../../src/http/body-guards.js';

describe('nestsDeeperThan, flat values first', () => {
  /** The depth by definition: a scalar 0, an object or array 1 + its deepest child. */
  const depth = (value: unknown): number =>
    typeof value === 'object' && value !== null
      ? 1 + Math.max(0, ...Object.values(value).map(depth))
      : 0;

  test('agrees with the definition on 20,000 random JSON values and limits', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const value = (levels: number): unknown => {
      const pick = random();
      if (levels === 0 || pick < 0.4) return pick < 0.1 ? null : pick < 0.2 ? 'x' : pick;
      const children = Array.from({ length: Math.floor(random() * 4) }, () => value(levels - 1));
      return pick < 0.7 ? children : Object.fromEntries(children.map((c, i) => [`k${i}`, c]));
    };
    for (let i = 0; i < 20_000; i++) {
      const body = value(Math.floor(random() * 5));
      const limit = Math.floor(random() * 5);
      expect([body, limit, nestsDeeperThan(body, limit)]).toEqual([
        body,
        limit,
        depth(body) > limit,
      ]);
    }
  });
});
