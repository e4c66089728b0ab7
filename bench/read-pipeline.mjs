#!/usr/bin/env node
/**
 * Micro-benchmark of the pure read stages a request pays before MySQL: query object → parse
 * ($filter included) → plan → compile, for the query strings of `npm run bench` scenario (a),
 * point read, and (c), filter, plus two filters with date/time literals and functions
 * (docs/filters.md). Compares the build in dist/ with a baseline build (BENCH_BASELINE_DIST, e.g. a
 * tsc build of an older commit) and prints nanoseconds per request and the ratio; without a
 * baseline it prints dist/ alone.
 *
 *   npm run build && node bench/read-pipeline.mjs
 *   BENCH_BASELINE_DIST=/tmp/base/dist node bench/read-pipeline.mjs
 *
 * Rounds alternate between the builds so that machine noise falls on both; the fastest round of
 * each counts (CPU time of this process, so a busy machine adds less noise than wall time).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ITEMS_TABLE as table } from './lib/items-table.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20_000);

const CASES = [
  { id: 'a', title: 'point read', query: { $filter: 'id eq 48213' } },
  {
    id: 'c',
    title: 'filter',
    query: {
      $filter: "category eq 'cat-7' and price ge 120 and price le 520",
      $orderby: 'id',
      $top: '50',
    },
  },
  {
    id: '18a',
    title: 'datetime range (new)',
    query: {
      $filter: 'created_at ge 2024-01-02T06:00:00.000Z and created_at lt 2024-01-09T00:00:00+02:00',
    },
    new: true,
  },
  {
    id: '18b',
    title: 'functions (new)',
    query: { $filter: "contains(tolower(category),'cat-7') and year(created_at) eq 2024" },
    new: true,
  },
];

async function load(dist) {
  const at = (file) => pathToFileURL(path.join(path.resolve(dist), file)).href;
  const [{ parseReadOptions }, { planRead }, { compileRead }] = await Promise.all([
    import(at('query/options.js')),
    import(at('plan/read-plan.js')),
    import(at('sql/compile-read.js')),
  ]);
  return (query) => compileRead(planRead(parseReadOptions(query), table));
}

/**
 * CPU nanoseconds per request for one round: process CPU time, not wall time, so that other
 * processes on a busy machine do not count (they still disturb caches: compare minimums).
 */
function round(pipeline, query) {
  let sink = 0;
  const start = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) sink += pipeline(query).params.length;
  const used = process.cpuUsage(start);
  if (sink < 0) throw new Error('unreachable');
  return ((used.user + used.system) * 1000) / ITERATIONS;
}

const minimum = (values) => Math.min(...values);

const builds = [{ name: 'dist', run: await load('dist') }];
if (process.env.BENCH_BASELINE_DIST) {
  builds.push({ name: 'baseline', run: await load(process.env.BENCH_BASELINE_DIST) });
}

console.log(
  `parse + plan + compile, CPU ns per request (fastest of ${ROUNDS} rounds × ${ITERATIONS})`,
);
for (const c of CASES) {
  const times = new Map(builds.map((b) => [b.name, []]));
  const runnable = builds.filter((b) => {
    if (!c.new || b.name === 'dist') return true;
    try {
      b.run(c.query);
      return true;
    } catch {
      return false; // the baseline cannot parse date/time literals or functions
    }
  });
  for (const b of runnable) round(b.run, c.query); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const b of r % 2 === 0 ? runnable : [...runnable].reverse()) {
      times.get(b.name).push(round(b.run, c.query));
    }
  }
  const now = minimum(times.get('dist'));
  const base = runnable.length > 1 ? minimum(times.get('baseline')) : null;
  const ratio =
    base === null ? '' : `  baseline ${base.toFixed(0)} ns  ratio ${(now / base).toFixed(3)}`;
  console.log(`(${c.id}) ${c.title.padEnd(22)} dist ${now.toFixed(0)} ns${ratio}`);
}
