#!/usr/bin/env node
/**
 * Scenarios (p) and (q): the server cache (docs/caching.md, "The server cache").
 *
 *   npm run build && node bench/cache.mjs      (also part of `npm run bench`, BENCH_SCENARIOS=p,q)
 *
 * A private MariaDB with the binary log on (the cache needs the change feed), the bench's
 * `items` table of 100,000 rows on it, tablegate (`--change-feed on`, `--cache` at its default)
 * and the floor server side by side:
 *
 * (p) a*: one row by id (`$filter=id eq N`) of a hot set of BENCH_CACHE_HOT ids; b*: a page of
 *     50 (`$orderby=id&$top=50&$skip=…`), one of the first 20 pages. Warm-up, then rounds in
 *     turn, as run.mjs measures (a) and (b); requests/s and the ratio to the floor's.
 * (q) staleness: 200 updates of one row by a mysql client, one every 20 ms, while 4 readers
 *     poll its key read every 5 ms: for each update and reader, the time from the commit's
 *     return to the answer of the first poll that held it (p99, max; also to that poll's start);
 *     then 200 updates through the gateway, each read back at once while the readers go on
 *     polling: stale read-backs, and polls started after a write's answer that held an older
 *     value (both must be 0).
 *
 * The requests/s of (p) are of servers loaded one after another on a shared machine; for ratios
 * to the floor measured pinned and side by side, with CPU per request, see bench/cache-ab.mjs.
 *
 * BENCH_CACHE_BEFORE=<dir>/dist/cli.js runs that build of tablegate too (key `before`), in the
 * same rounds, for a before/after ratio of one change measured side by side.
 *
 * Prints a Markdown section (stdout when run alone). No assertions.
 */
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { binlogSession } from './lib/binlog-session.mjs';
import { BENCH_DB } from './lib/database.mjs';
import { LoadTally, runLoad, timedGet } from './lib/load.mjs';
import { stopAll } from './lib/processes.mjs';
import { DIALECTS, hotScenarios, seededRandom } from './lib/scenarios.mjs';
import { SERVERS } from './lib/servers.mjs';

const env = process.env;
const settings = {
  seconds: Number(env.BENCH_SECONDS ?? 3),
  rounds: Number(env.BENCH_ROUNDS ?? 3),
  warmup: Number(env.BENCH_WARMUP_SECONDS ?? 3),
  connections: Number(env.BENCH_CONNECTIONS ?? 32),
  hot: Number(env.BENCH_CACHE_HOT ?? 100),
  scenarios: env.BENCH_SCENARIOS?.split(',').map((s) => s.trim()),
  before: env.BENCH_CACHE_BEFORE,
};
const log = (text) => process.stderr.write(`${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const wanted = (id) => !settings.scenarios || settings.scenarios.includes(id);

const LOADS = hotScenarios(settings.hot);

async function load(servers, scenario) {
  const tallies = new Map(servers.map((s) => [s.key, new LoadTally()]));
  const random = seededRandom(20261122);
  const next = () => scenario.request(DIALECTS.tablegate, random);
  for (const server of servers) {
    log(`  ${scenario.id}: warm-up ${server.key}`);
    await runLoad({
      base: server.base,
      connections: settings.connections,
      seconds: settings.warmup,
      next,
      tally: null,
    });
  }
  for (let round = 0; round < settings.rounds; round++) {
    const order = servers.map((_, i) => servers[(i + round) % servers.length]);
    for (const server of order) {
      log(`  ${scenario.id}: round ${round + 1}/${settings.rounds} ${server.key}`);
      await sleep(300);
      await runLoad({
        base: server.base,
        connections: settings.connections,
        seconds: settings.seconds,
        next,
        tally: tallies.get(server.key),
      });
    }
  }
  for (const [key, tally] of tallies) tally.requireClean(key);
  return tallies;
}

const KEY = 4242;

/**
 * (q): the mysql client's updates, timed to the first poll of each reader that answers them; then
 * the gateway's own writes, each read back at once while the readers go on polling.
 */
async function staleness(base, admin) {
  const readers = 4;
  const updates = 200;
  const committed = new Map();
  // Reader → value → { started, arrived } of the first poll whose answer held it (or a later one).
  const firstSeen = Array.from({ length: readers }, () => new Map());
  // The value of the gateway's last write answered so far: a poll started after that answer
  // must hold it or a later one (the write drops what it touches before it answers).
  let ownAnswered = -1;
  let staleAfterOwn = 0;
  let backwards = 0;
  let polls = 0;
  let stop = false;
  await admin.query(`UPDATE ${BENCH_DB}.items SET qty = 0 WHERE id = ?`, [KEY]);
  const read = async (via) => {
    const { status, text } = await timedGet(base, `/table/items/read(id,${KEY})?$select=qty`, {
      keepBody: true,
      via,
    });
    if (status !== 200) throw new Error(`key read answered ${status}: ${text}`);
    return JSON.parse(text).qty;
  };
  const poll = async (r) => {
    const via = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let last = -1;
    while (!stop) {
      const own = ownAnswered;
      const started = performance.now();
      const qty = await read(via);
      const arrived = performance.now();
      polls++;
      if (qty < own) staleAfterOwn++;
      if (qty < last) backwards++;
      last = qty;
      for (let v = 1; v <= Math.min(qty, updates); v++) {
        if (!firstSeen[r].has(v)) firstSeen[r].set(v, { started, arrived });
      }
      await sleep(5);
    }
    via.destroy();
  };
  const polling = Array.from({ length: readers }, (_, r) => poll(r));
  try {
    await sleep(200);
    for (let v = 1; v <= updates; v++) {
      await admin.query(`UPDATE ${BENCH_DB}.items SET qty = ? WHERE id = ?`, [v, KEY]);
      committed.set(v, performance.now());
      await sleep(20);
    }
    await sleep(1000);
    // The gateway's own writes, each read back at once, the readers still polling (a poll's miss
    // that read MySQL before a write must not be kept after the write's drop).
    let staleReadBack = 0;
    for (let v = 1; v <= updates; v++) {
      const response = await fetch(`${base}/table/items/update(id,${KEY})`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ qty: 100_000 + v }),
      });
      await response.text();
      if (response.status !== 200) throw new Error(`update answered ${response.status}`);
      ownAnswered = 100_000 + v;
      if ((await read(undefined)) !== 100_000 + v) staleReadBack++;
      await sleep(5);
    }
    stop = true;
    await Promise.all(polling);
    const arrivedDelays = [];
    const startedDelays = [];
    let unseen = 0;
    for (let v = 1; v <= updates; v++) {
      for (let r = 0; r < readers; r++) {
        const seen = firstSeen[r].get(v);
        if (seen === undefined) {
          unseen++;
          continue;
        }
        arrivedDelays.push(Math.max(0, seen.arrived - committed.get(v)));
        startedDelays.push(Math.max(0, seen.started - committed.get(v)));
      }
    }
    const summary = (delays) => {
      delays.sort((a, b) => a - b);
      const p = (q) =>
        delays[Math.min(delays.length - 1, Math.ceil(q * delays.length) - 1)] ?? null;
      return { p50: p(0.5), p99: p(0.99), max: delays.at(-1) ?? null };
    };
    return {
      ...summary(arrivedDelays),
      fromStart: summary(startedDelays),
      unseen,
      staleReadBack,
      staleAfterOwn,
      backwards,
      polls,
      updates,
      readers,
    };
  } finally {
    stop = true;
    await Promise.allSettled(polling);
  }
}

/** The whole of (p) and (q); returns its Markdown section. Stops everything it started. */
export function runCacheBench() {
  return binlogSession('cache-bench', async ({ db, admin, tmp }) => {
    const start = (key, extraArgs = [], more = {}) =>
      SERVERS.find((s) => s.key === key).start({ db, tmp, poolSize: 10, extraArgs, ...more });
    const gateway = await start('tablegate', ['--change-feed', 'on']);
    const floor = await start('floor');
    const before = settings.before
      ? await start('tablegate', ['--change-feed', 'on'], { cli: settings.before, key: 'before' })
      : null;
    const lines = [`### (p), (q): the server cache (bench/cache.mjs)`, ''];
    if (wanted('p')) {
      lines.push(
        `${settings.rounds} rounds of ${settings.seconds} s per server after ${settings.warmup} s of warm-up, ${settings.connections} connections; tablegate with \`--change-feed on\` (\`--cache\` 64 MiB by default), against a private MariaDB with the binary log on.`,
        '',
        before
          ? `| scenario | tablegate req/s | floor req/s | ratio | tablegate p99 ms | before (${settings.before}) req/s | before ratio |`
          : '| scenario | tablegate req/s | floor req/s | ratio | tablegate p99 ms |',
        before
          ? '| --- | ---: | ---: | ---: | ---: | ---: | ---: |'
          : '| --- | ---: | ---: | ---: | ---: |',
      );
      for (const scenario of LOADS) {
        const tallies = await load(before ? [gateway, floor, before] : [gateway, floor], scenario);
        const g = tallies.get('tablegate');
        const f = tallies.get('floor');
        const b = tallies.get('before');
        const then = b ? ` ${b.rps.toFixed(0)} | ${(b.rps / f.rps).toFixed(2)} × |` : '';
        lines.push(
          `| (${scenario.id}) ${scenario.title} | ${g.rps.toFixed(0)} | ${f.rps.toFixed(0)} | ${(g.rps / f.rps).toFixed(2)} × | ${g.percentile(99)?.toFixed(1)} |${then}`,
        );
      }
      lines.push('');
    }
    if (wanted('q')) {
      log('scenario q: staleness');
      const s = await staleness(gateway.base, admin);
      const ms = (v) => (v === null ? '–' : `${v.toFixed(1)} ms`);
      lines.push(
        `(q) ${s.updates} updates of one row by a mysql client, one every 20 ms, ${s.readers} readers polling its key read every 5 ms (${s.polls} polls in all): from the commit's return to the answer of each reader's first poll that held the new value, p50 ${ms(s.p50)}, p99 ${ms(s.p99)} (target ≤ 100 ms), max ${ms(s.max)} (target ≤ 250 ms); to that poll's start, p99 ${ms(s.fromStart.p99)}, max ${ms(s.fromStart.max)}; never seen: ${s.unseen}. Then ${s.updates} updates through the gateway, the readers still polling: each read back at once, ${s.staleReadBack} stale; readers' polls started after a write's answer that held an older value, ${s.staleAfterOwn} (target 0 for both); answers older than one the same reader had already had, ${s.backwards}.`,
        '',
      );
    }
    return lines.join('\n');
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    process.stdout.write(await runCacheBench());
    process.exit(0);
  } catch (error) {
    log(`cache bench failed: ${error.stack ?? error}`);
    await stopAll().catch(() => {});
    process.exit(1);
  }
}
