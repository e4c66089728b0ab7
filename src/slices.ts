/**
 * Work done as steps (a generator that yields between pieces), run in slices of event-loop time
 * (DESCRIPTION_SLICE_MS) so that other requests are answered meanwhile: the API description and
 * OData's `$metadata` builds (http/description-cache.ts, odata/service-cache.ts) and the schema
 * re-read's making of tables from information_schema rows (db/schema.ts). Work that ends within
 * one slice never waits for a turn of the loop.
 */
import { DESCRIPTION_SLICE_MS } from './limits.js';

/** Runs `steps` to the end, letting other callbacks run whenever a slice is used up. */
export async function runInSlices<T>(steps: Iterator<unknown, T>): Promise<T> {
  let sliceEnd = performance.now() + DESCRIPTION_SLICE_MS;
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() >= sliceEnd) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceEnd = performance.now() + DESCRIPTION_SLICE_MS;
    }
  }
}

/** Runs `steps` to the end at once, for callers that need the answer synchronously. */
export function runAtOnce<T>(steps: Iterator<unknown, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}
