/**
 * The fuzzers' seed: FUZZ_SEED=<n> replays a run; under CI it is fixed (a landing must not depend
 * on luck); elsewhere it is random, to keep exploring. fast-check prints it when a run fails.
 */
import { randomInt } from 'node:crypto';

export const FIXED_FUZZ_SEED = 20261122;

export function fuzzSeed(): number {
  if (process.env.FUZZ_SEED !== undefined) return Number(process.env.FUZZ_SEED);
  return process.env.CI ? FIXED_FUZZ_SEED : randomInt(2 ** 31);
}
