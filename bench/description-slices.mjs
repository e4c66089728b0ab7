/**
 * How long a description build holds the event loop, in slices (runInSlices, dist/slices.js)
 * and run at once, side by side in one run: the longest gap between two turns of the loop
 * while 400 ms of steps run, each way, over BENCH_ROUNDS rounds (default 5).
 * test/unit/http/description-cache.test.ts checks that other callbacks run between slices; the
 * length of the gaps is measured here, where a loaded machine only stretches both columns.
 *
 *   npm run build && node bench/description-slices.mjs
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as turn } from 'node:timers/promises';
import { DESCRIPTION_SLICE_MS } from '../dist/limits.js';
import { runInSlices } from '../dist/slices.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const STEPS = 2000;
const STEP_MS = 0.2;

function* busySteps() {
  for (let i = 0; i < STEPS; i++) {
    const until = performance.now() + STEP_MS;
    while (performance.now() < until) {
      // A step of the build that holds the thread.
    }
    yield;
  }
  return STEPS;
}

/** The longest gap between two turns of the loop (ms) while `build` runs. */
async function longestGap(build) {
  let building = true;
  let last = performance.now();
  let longest = 0;
  const watching = (async () => {
    while (building) {
      await turn();
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }
  })();
  await turn();
  await build();
  building = false;
  await watching;
  return longest;
}

const atOnce = async () => {
  for (const _ of busySteps());
};

console.log(
  `| round | in slices (${DESCRIPTION_SLICE_MS} ms) longest gap, ms | at once longest gap, ms | at once ÷ in slices |`,
);
console.log('| ---: | ---: | ---: | ---: |');
for (let round = 1; round <= ROUNDS; round++) {
  const sliced = await longestGap(() => runInSlices(busySteps()));
  const whole = await longestGap(atOnce);
  console.log(
    `| ${round} | ${sliced.toFixed(1)} | ${whole.toFixed(1)} | ${(whole / sliced).toFixed(0)} |`,
  );
}
