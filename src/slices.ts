/**
 * Work done as steps (a generator that yields between pieces), run in slices of event-loop time
 * (DESCRIPTION_SLICE_MS) so that other requests are answered meanwhile: the API description and
 * OData's `$metadata` builds (http/description-cache.ts, odata/service-cache.ts) and the schema
 * re-read's making of tables from information_schema rows (db/schema.ts). Work that ends within
 * one slice never waits for a turn of the loop.
 */
import { DESCRIPTION_SLICE_MS } from './limits.js';

/**
 * The end of the current slice, shared by every run under way: builds that run at once (the
 * schema re-read, a role's model, `$metadata` in XML and in JSON, /openapi.json) get one slice
 * per turn of the loop between them, not one each, so a turn holds other requests one slice
 * (DESCRIPTION_SLICE_MS) however many run.
 */
let sliceEnd = 0;
let nextTurn: Promise<void> | null = null;

/** The next turn of the loop, one setImmediate for every run waiting; it begins the next slice. */
function turn(): Promise<void> {
  nextTurn ??= new Promise((resolve) =>
    setImmediate(() => {
      nextTurn = null;
      sliceEnd = performance.now() + DESCRIPTION_SLICE_MS;
      resolve();
    }),
  );
  return nextTurn;
}

/**
 * Runs `steps` to the end, letting other callbacks run whenever the slice is used up. A run
 * takes a step per turn even when the slice is spent (another run ahead of it used it), so
 * none waits for all the others to end.
 */
export async function runInSlices<T>(steps: Iterator<unknown, T>): Promise<T> {
  if (performance.now() >= sliceEnd) sliceEnd = performance.now() + DESCRIPTION_SLICE_MS;
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() >= sliceEnd) await turn();
  }
}

/** Runs `steps` to the end at once, for callers that need the answer synchronously. */
export function runAtOnce<T>(steps: Iterator<unknown, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}
