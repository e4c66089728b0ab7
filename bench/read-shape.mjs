#!/usr/bin/env node
/**
 * Micro-benchmark of the read handler's planning part (src/http/read.ts: URL and query object →
 * compiled read) for point reads of random ids, `$filter=id eq <random>` on the bench's `items`
 * table: planned afresh on every request (the read cache misses: each query string is new), and
 * found by shape (http/read-shape.ts). Prints CPU µs per request for both, then the heap after
 * 200,000 random ids through the whole handler path (should not grow with the ids).
 *
 *   npm run build && node --expose-gc bench/read-shape.mjs
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ITEMS_TABLE as table } from './lib/items-table.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20_000);
const HEAP_IDS = 200_000;

const at = (file) => pathToFileURL(path.resolve('dist', file)).href;
const [{ ReadCache, compiledRead, rawQueryString }, { ShapeCache }, options, plan, stage] =
  await Promise.all([
    import(at('http/read-cache.js')),
    import(at('http/read-shape.js')),
    import(at('query/options.js')),
    import(at('plan/read-plan.js')),
    import(at('policy/stage.js')),
  ]);

/** The handler's steps from `request.url` and `request.query` to the compiled read. */
function handler(withShapes) {
  const cache = new ReadCache();
  const shapes = new ShapeCache();
  return (url, queryObject) => {
    const query = rawQueryString(url);
    const cached = query === null ? undefined : cache.get(table, query);
    const shape = cached === undefined && withShapes ? shapes.find(table, queryObject) : null;
    let read =
      cached === undefined
        ? shape && shapes.read(shape, null)
        : compiledRead(cached, stage.guardRead(null, cached.plan), null);
    if (read === null) {
      const planned = plan.planRead(options.parseReadOptions(queryObject), table);
      const entry = query === null ? { plan: planned } : cache.add(query, planned);
      const guarded = stage.guardRead(null, entry.plan);
      read = compiledRead(entry, guarded, null);
      if (shape !== null) shapes.learn(shape, queryObject, guarded, read, null);
    }
    return { read, shapes };
  };
}

/** One request of a random id, as the router gives it: the URL and the decoded query. */
function request(run) {
  const id = Math.floor(Math.random() * 100_000) + 1;
  return run(`/table/items/read?$filter=id%20eq%20${id}`, { $filter: `id eq ${id}` });
}

/** CPU µs per request for one round (this process's CPU time: other processes count less). */
function round(run) {
  let sink = 0;
  const start = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) sink += request(run).read.select.params.length;
  const used = process.cpuUsage(start);
  if (sink !== ITERATIONS) throw new Error('one parameter per point read');
  return (used.user + used.system) / ITERATIONS;
}

const variants = [
  { name: 'planned afresh', run: handler(false), times: [] },
  { name: 'found by shape', run: handler(true), times: [] },
];
for (const v of variants) round(v.run); // warm-up (and the shape's two sights)
for (let r = 0; r < ROUNDS; r++) {
  for (const v of r % 2 === 0 ? variants : [...variants].reverse()) v.times.push(round(v.run));
}
console.log(
  `point read, CPU µs per request (fastest / median of ${ROUNDS} rounds × ${ITERATIONS})`,
);
for (const v of variants) {
  const sorted = [...v.times].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  console.log(`  ${v.name.padEnd(15)} ${sorted[0].toFixed(2)} / ${median.toFixed(2)}`);
}

if (globalThis.gc === undefined) {
  console.log('heap: run with node --expose-gc to measure it');
} else {
  const heap = () => {
    globalThis.gc();
    return process.memoryUsage().heapUsed / 2 ** 20;
  };
  for (const v of variants) {
    const run = handler(v.name === 'found by shape');
    request(run);
    const before = heap();
    let last;
    for (let i = 0; i < HEAP_IDS; i++) last = request(run);
    const after = heap();
    console.log(
      `heap after ${HEAP_IDS.toLocaleString('en')} random ids, ${v.name}: ` +
        `${before.toFixed(1)} → ${after.toFixed(1)} MiB (shapes kept: ${last.shapes.size})`,
    );
  }
}
