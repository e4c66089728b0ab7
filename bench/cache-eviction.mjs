/**
 * The answer cache's eviction, measured (issue: "bounded in memory, with LRU or better:
 * measure"). No MySQL: one process replays the same trace of reads and writes against the
 * gateway's own AnswerCache (dist/cache/answer-cache.js: SIEVE by bytes, Zhang et al., NSDI '24:
 * a hit marks its entry, a hand sweeping from the oldest spares marked entries once) and, beside
 * it in this file, two other policies with the same byte accounting and drops: FIFO (the floor of
 * any policy) and least-recently-used as a Map keeps it (a hit moves its entry to the end: the
 * gateway's policy before). Prints the hit ratio of each at cache sizes of 5, 10 and 25 % of the
 * bytes the trace touches, and the time per operation.
 *
 *   npm run build && node bench/cache-eviction.mjs
 *
 * BENCH_EVICT_KEYS (distinct answers, 20,000), BENCH_EVICT_OPS (400,000), BENCH_EVICT_ZIPF
 * (popularity skew, 0.9), BENCH_EVICT_WRITES (writes per 100 operations, 0.1; each drops the
 * answers of one table of 20), BENCH_SEED.
 * The traces: `zipf` (reads by popularity; 70 % key reads of ~300 B, 30 % pages of ~6 KB over
 * 20 tables), and `zipf + scans` (the same, with one read in five a page no one asks for again:
 * a crawler walking $skiptoken pages). No assertions.
 */
import { performance } from 'node:perf_hooks';
import { AnswerCache } from '../dist/cache/answer-cache.js';
import { seededRandom } from './lib/scenarios.mjs';

const env = process.env;
const KEYS = Number(env.BENCH_EVICT_KEYS ?? 20_000);
const OPS = Number(env.BENCH_EVICT_OPS ?? 400_000);
const SKEW = Number(env.BENCH_EVICT_ZIPF ?? 0.9);
const WRITES = Number(env.BENCH_EVICT_WRITES ?? 0.1);
const TABLES = 20;
const SEED = Number(env.BENCH_SEED ?? 7);

const OVERHEAD = 320; // as the gateway's ENTRY_OVERHEAD: what an entry costs besides its body

/** The answers: a key, its table, its body. */
function answers(random) {
  const list = [];
  for (let i = 0; i < KEYS; i++) {
    const page = random() < 0.3;
    const size = page ? 4000 + Math.floor(random() * 4000) : 200 + Math.floor(random() * 200);
    list.push({
      key: `${page ? 'r' : 'k'}\u0000reader\u0000t${i % TABLES}\u0000${i}`,
      table: `t${i % TABLES}`,
      body: Buffer.alloc(size, 0x61),
    });
  }
  return list;
}

/** Ranks drawn with P(rank r) ∝ 1 / r^s, by inverse transform over the cumulative weights. */
function zipfSampler(random, n, s) {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let r = 0; r < n; r++) {
    total += 1 / (r + 1) ** s;
    cumulative[r] = total;
  }
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** The trace: { read: index } or { write: table }; scans read answers past the popular ones. */
function trace(scans) {
  const random = seededRandom(SEED);
  const pick = zipfSampler(random, KEYS, SKEW);
  const ops = [];
  let scan = 0;
  for (let i = 0; i < OPS; i++) {
    if (random() * 100 < WRITES) ops.push({ write: `t${Math.floor(random() * TABLES)}` });
    else if (scans && random() < 0.2) ops.push({ read: -1 - (scan++ % 1_000_000) });
    else ops.push({ read: pick() });
  }
  return ops;
}

/** FIFO and LRU, with the gateway's byte accounting and drops by table. */
class Policy {
  constructor(maxBytes, lru) {
    this.maxBytes = maxBytes;
    this.lru = lru;
    this.entries = new Map(); // oldest (FIFO) or least recently used (LRU) first
    this.byTable = new Map();
    this.size = 0;
  }
  get(key) {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.lru) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }
  keep(key, table, body) {
    const bytes = body.length + key.length * 2 + OVERHEAD;
    const entry = { key, table, body, bytes };
    this.entries.set(key, entry);
    this.size += bytes;
    let set = this.byTable.get(table);
    if (set === undefined) {
      set = new Set();
      this.byTable.set(table, set);
    }
    set.add(entry);
    while (this.size > this.maxBytes) this.remove(this.entries.values().next().value);
  }
  drop(table) {
    const set = this.byTable.get(table);
    if (set === undefined) return;
    for (const entry of [...set]) this.remove(entry);
  }
  remove(entry) {
    this.entries.delete(entry.key);
    this.size -= entry.bytes;
    this.byTable.get(entry.table)?.delete(entry);
  }
}

/** Replays a trace; returns the hit ratio and ns per operation. */
function replay(name, maxBytes, list, ops) {
  let hits = 0;
  let reads = 0;
  let get;
  let keep;
  let drop;
  if (name === 'SIEVE (the gateway)') {
    const cache = new AnswerCache(maxBytes, maxBytes);
    get = (a) => cache.get(a.key, null);
    keep = (a) => cache.keep(cache.ticket(), a.key, false, null, [a.table], answerOf(a));
    drop = (table) => cache.drop([table]);
  } else {
    const cache = new Policy(maxBytes, name === 'LRU');
    get = (a) => cache.get(a.key);
    keep = (a) => cache.keep(a.key, a.table, a.body);
    drop = (table) => cache.drop(table);
  }
  const scanned = (i) => {
    const body = list[i % KEYS].body;
    return { key: `s\u0000${i}`, table: `t${i % TABLES}`, body };
  };
  const started = performance.now();
  for (const op of ops) {
    if (op.write !== undefined) {
      drop(op.write);
      continue;
    }
    const a = op.read >= 0 ? list[op.read] : scanned(-op.read);
    reads++;
    if (get(a) !== undefined) hits++;
    else keep(a);
  }
  const ns = ((performance.now() - started) * 1e6) / ops.length;
  return { ratio: hits / reads, ns };
}

function answerOf(a) {
  return { body: a.body, type: 'application/json', etag: '"x"', total: null, link: null };
}

const list = answers(seededRandom(SEED + 1));
const touched = list.reduce((sum, a) => sum + a.body.length + a.key.length * 2 + OVERHEAD, 0);
const policies = ['FIFO', 'LRU', 'SIEVE (the gateway)'];
console.log(
  `### Answer cache eviction: ${KEYS.toLocaleString('en')} answers (${(touched / 2 ** 20).toFixed(1)} MiB), ` +
    `${OPS.toLocaleString('en')} operations, Zipf ${SKEW}, ${WRITES} writes per 100, seed ${SEED}\n`,
);
console.log(
  '| trace | cache size | ' + policies.map((p) => `${p}: hits, ns/op`).join(' | ') + ' |',
);
console.log('|---|---:|' + policies.map(() => '---:').join('|') + '|');
for (const scans of [false, true]) {
  const ops = trace(scans);
  for (const share of [0.05, 0.1, 0.25]) {
    const maxBytes = Math.round(touched * share);
    // Twice each, alternated; the second is kept (the first warms the JIT).
    const cells = [];
    for (const policy of policies) replay(policy, maxBytes, list, ops);
    for (const policy of policies) {
      const { ratio, ns } = replay(policy, maxBytes, list, ops);
      cells.push(`${(ratio * 100).toFixed(1)} %, ${ns.toFixed(0)}`);
    }
    console.log(
      `| ${scans ? 'zipf + scans' : 'zipf'} | ${share * 100} % (${(maxBytes / 2 ** 20).toFixed(1)} MiB) | ${cells.join(' | ')} |`,
    );
  }
}
