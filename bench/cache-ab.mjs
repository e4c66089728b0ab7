#!/usr/bin/env node
/**
 * The server cache against the floor, pinned and side by side (issue 48's bench: (a*) and (b*)
 * with the cache on ≥ 2.5 × the floor's requests/s; (a), (b), (c) with the cache off).
 *
 *   npm run build && node bench/cache-ab.mjs
 *
 * bench/cache.mjs measures servers one after another, unpinned, on a machine shared with other
 * work: the floor's own (a*) moved by 70 % between two runs. Here, in one run on a private
 * MariaDB with the binary log on: the load generator (this process) on the machine's first CPUs,
 * every server and mysqld on the last one (taskset), one server loaded at a time, rounds in
 * ABAB order (the first of a pair swapped each round, both on the same seeded requests), and:
 *
 * - requests/s of each, and their ratio to the floor's of the same round;
 * - CPU per request of each server process and of mysqld (from /proc), over the same runs: a
 *   hit costs MySQL nothing and the floor's every answer costs it a query, so the fair cost of
 *   an answer is the server's and mysqld's together. Their inverse ratio (answers per CPU-second)
 *   is what the server side would give if it were the only limit;
 * - the share of a CPU the server and mysqld got together while loaded (well under 100 %: other
 *   work on the core took the rest, and the scheduler shares it by thread, so the floor's side,
 *   with mysqld's threads, gets more of a crowded core than a hit's one Node thread), the load
 *   generator's share of its core (near 100 %: it, not the server, set the pace), the cache's
 *   hits per request (from its /metrics), and the load average and steal.
 *
 * Servers: `tablegate --change-feed on` (`--cache` at its default of 64 MiB) for (a*) and (b*);
 * `tablegate --change-feed off` (the cache off, as in `npm run bench`) for (a), (b), (c); the
 * floor (bench/floor-server.mjs) for all. Settings: BENCH_SCENARIOS (a*,b*,a,b,c), BENCH_ROUNDS
 * (8), BENCH_SECONDS (3), BENCH_WARMUP_SECONDS (2), BENCH_CONNECTIONS (32), BENCH_CACHE_HOT
 * (100), BENCH_CACHE_MYSQLD=any (mysqld left unpinned, on any CPU).
 *
 * Prints Markdown to stdout. No assertions.
 */
import os from 'node:os';
import { binlogSession } from './lib/binlog-session.mjs';
import { LoadTally, runLoad } from './lib/load.mjs';
import { cpuSeconds, machineTicks, stolenPercent } from './lib/proc.mjs';
import { median } from './lib/report.mjs';
import { DIALECTS, hotScenarios, SCENARIOS, seededRandom } from './lib/scenarios.mjs';
import { freePort, SERVERS } from './lib/servers.mjs';
import { pinServers } from './lib/together.mjs';

const env = process.env;
const settings = {
  scenarios: (env.BENCH_SCENARIOS ?? 'a*,b*,a,b,c').split(',').map((s) => s.trim()),
  rounds: Number(env.BENCH_ROUNDS ?? 8),
  seconds: Number(env.BENCH_SECONDS ?? 3),
  warmup: Number(env.BENCH_WARMUP_SECONDS ?? 2),
  connections: Number(env.BENCH_CONNECTIONS ?? 32),
  hot: Number(env.BENCH_CACHE_HOT ?? 100),
  mysqldPinned: env.BENCH_CACHE_MYSQLD !== 'any',
};
const log = (text) => process.stderr.write(`${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The cache's hit and miss counters from its Prometheus text. */
async function cacheCounters(metricsBase) {
  const text = await fetch(`${metricsBase}/metrics`).then((response) => response.text());
  const counter = (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    hits: counter('tablegate_cache_hits_total'),
    misses: counter('tablegate_cache_misses_total'),
  };
}

/** One server alone under the scenario's load for `seconds`: what it and mysqld spent. */
async function measure(server, scenario, seed, seconds, mysqldPid) {
  const random = seededRandom(seed);
  const tally = new LoadTally();
  const counted = server.metricsBase ? await cacheCounters(server.metricsBase) : null;
  const ticks = machineTicks();
  const ownCpu = process.cpuUsage();
  const serverCpu = cpuSeconds(server.pid);
  const mysqldCpu = cpuSeconds(mysqldPid);
  const started = performance.now();
  await runLoad({
    base: server.base,
    connections: settings.connections,
    seconds,
    next: () => scenario.request(DIALECTS.tablegate, random),
    tally,
  });
  const wall = (performance.now() - started) / 1000;
  const serverUsed = cpuSeconds(server.pid) - serverCpu;
  const mysqldUsed = cpuSeconds(mysqldPid) - mysqldCpu;
  const own = process.cpuUsage(ownCpu);
  const stolen = stolenPercent(ticks, machineTicks());
  tally.requireClean(server.key);
  const after = counted ? await cacheCounters(server.metricsBase) : null;
  const answers = tally.responses;
  return {
    rps: tally.rps,
    us: (serverUsed / answers) * 1e6,
    mysqldUs: (mysqldUsed / answers) * 1e6,
    loadgen: (own.user + own.system) / 1e6 / wall,
    // The share of a CPU the server and mysqld got together: on a crowded core the scheduler
    // shares time by thread, and mysqld's threads give the floor's side more of it than a hit's
    // one Node thread gets.
    share: (serverUsed + mysqldUsed) / wall,
    hitShare: after
      ? (after.hits - counted.hits) / (after.hits + after.misses - counted.hits - counted.misses)
      : null,
    stolen,
    load: os.loadavg()[0],
  };
}

/** Rounds of `server` and the floor in ABAB order; one pair of measurements a round. */
async function pairRounds(server, floor, scenario, index, mysqldPid) {
  for (const s of [server, floor]) {
    log(`  ${scenario.id}: warm-up ${s.key}`);
    await measure(s, scenario, 999, settings.warmup, mysqldPid);
  }
  const rounds = [];
  for (let round = 0; round < settings.rounds; round++) {
    const order = round % 2 === 0 ? [server, floor] : [floor, server];
    const got = new Map();
    for (const s of order) {
      log(`  ${scenario.id}: round ${round + 1}/${settings.rounds} ${s.key}`);
      await sleep(300);
      got.set(
        s,
        await measure(s, scenario, 1000 * (index + 1) + round, settings.seconds, mysqldPid),
      );
    }
    rounds.push({ x: got.get(server), floor: got.get(floor) });
  }
  return rounds;
}

const spread = (values, digits = 2) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${median(sorted).toFixed(digits)} (${sorted[0].toFixed(digits)}–${sorted.at(-1).toFixed(digits)})`;
};
const pct = (value) => `${Math.round(100 * value)} %`;

await binlogSession('cache-ab', async ({ db, tmp, mysqldPid }) => {
  const start = (key, as, extraArgs) =>
    SERVERS.find((s) => s.key === key).start({ db, tmp, poolSize: 10, key: as, extraArgs });
  const metricsPort = await freePort();
  const cached = {
    ...(await start('tablegate', 'tablegate-cache', [
      '--change-feed',
      'on',
      '--metrics-port',
      String(metricsPort),
    ])),
    metricsBase: `http://127.0.0.1:${metricsPort}`,
  };
  const uncached = await start('tablegate', 'tablegate-no-cache', ['--change-feed', 'off']);
  const floor = await start('floor', 'floor', []);
  // Before pinning: this process sees only its own CPUs after.
  const last = os.availableParallelism() - 1;
  pinServers([cached, uncached, floor, ...(settings.mysqldPinned ? [{ pid: mysqldPid }] : [])]);
  const loadBefore = os.loadavg();

  const wanted = [
    ...hotScenarios(settings.hot).map((scenario) => ({ scenario, server: cached })),
    ...SCENARIOS.filter((s) => ['a', 'b', 'c'].includes(s.id)).map((scenario) => ({
      scenario,
      server: uncached,
    })),
  ].filter(({ scenario }) => settings.scenarios.includes(scenario.id));

  const results = [];
  for (const [index, { scenario, server }] of wanted.entries()) {
    results.push({
      scenario,
      server,
      rounds: await pairRounds(server, floor, scenario, index, mysqldPid),
    });
  }
  const loadAfter = os.loadavg();

  const all = results.flatMap(({ rounds }) => rounds.flatMap((r) => [r.x, r.floor]));
  const lines = [
    '### The server cache against the floor, pinned side by side (bench/cache-ab.mjs)',
    '',
    `${settings.rounds} rounds × ${settings.seconds} s per server after ${settings.warmup} s of warm-up, ${settings.connections} connections, one server loaded at a time in ABAB order; the load generator on CPU${last > 1 ? `s 0–${last - 1}` : ' 0'}, the servers${settings.mysqldPinned ? ' and mysqld' : ''} on CPU ${last}${settings.mysqldPinned ? '' : ', mysqld on any'}; a private MariaDB with the binary log on. 1-minute load average ${Math.min(...all.map((m) => m.load)).toFixed(1)}–${Math.max(...all.map((m) => m.load)).toFixed(1)} over the runs (${loadBefore[0].toFixed(1)} before, ${loadAfter[0].toFixed(1)} after), CPU stolen by the hypervisor ${spread(
      all.map((m) => m.stolen),
      1,
    )} % a run.`,
    '',
    'Medians over the rounds:',
    '',
    '| scenario | server | req/s | server µs/req | mysqld µs/req | server + mysqld µs/req | server + mysqld CPU | load generator CPU | cache hits |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const med = (rounds, pick) => median(rounds.map(pick));
  for (const { scenario, server, rounds } of results) {
    for (const [key, side] of [
      [server.key, (r) => r.x],
      ['floor', (r) => r.floor],
    ]) {
      const m = (pick) => med(rounds, (r) => pick(side(r)));
      const hits = side(rounds[0]).hitShare === null ? '' : pct(m((x) => x.hitShare));
      lines.push(
        `| (${scenario.id}) ${scenario.title} | ${key} | ${m((x) => x.rps).toFixed(0)} | ${m((x) => x.us).toFixed(1)} | ${m((x) => x.mysqldUs).toFixed(1)} | ${m((x) => x.us + x.mysqldUs).toFixed(1)} | ${pct(m((x) => x.share))} | ${pct(m((x) => x.loadgen))} | ${hits} |`,
      );
    }
  }
  lines.push(
    '',
    'Ratios to the floor, each round against the floor of the same round: median (min–max).',
    '',
    '| scenario | req/s ÷ floor | rounds (req/s ÷ floor) | answers per CPU-second of server + mysqld ÷ floor | server CPU/req ÷ floor |',
    '|---|--:|---|--:|--:|',
  );
  for (const { scenario, rounds } of results) {
    const rps = rounds.map((r) => r.x.rps / r.floor.rps);
    const perCpu = rounds.map((r) => (r.floor.us + r.floor.mysqldUs) / (r.x.us + r.x.mysqldUs));
    const serverCpu = rounds.map((r) => r.x.us / r.floor.us);
    lines.push(
      `| (${scenario.id}) | ${spread(rps)} | ${rps.map((v) => v.toFixed(2)).join(' ')} | ${spread(perCpu)} | ${spread(serverCpu)} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
});
