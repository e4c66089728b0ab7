#!/usr/bin/env node
/**
 * What `Prefer: return=representation` costs on a create of one row (docs/writes.md): the same
 * build of tablegate twice, loaded *at the same time*, one with plain creates (scenario (e) of
 * `npm run bench`), the other with the same creates asking for the written row back (the INSERT
 * and a SELECT of the row by its id in one transaction, instead of the INSERT alone under
 * autocommit). The servers swap loads every round, so a difference between the two processes
 * cancels out. Prints, round by round and as medians, each load's CPU per request in the
 * gateway and requests per second, and the ratios representation ÷ plain.
 *
 *   npm run build && node bench/return-representation.mjs
 *
 * Settings: BENCH_ROUNDS (8), BENCH_SECONDS (3), BENCH_CONNECTIONS (16 per server), BENCH_DB_*
 * and BENCH_TABLEGATE_CLI (bench/README.md).
 */
import { LoadTally, runLoad } from './lib/load.mjs';
import { cpuSeconds } from './lib/proc.mjs';
import { median } from './lib/report.mjs';
import { DIALECTS, SCENARIOS, seededRandom } from './lib/scenarios.mjs';
import { CLI, SERVERS } from './lib/servers.mjs';
import { benchSession } from './lib/session.mjs';

const env = process.env;
const settings = {
  rounds: Number(env.BENCH_ROUNDS ?? 8),
  seconds: Number(env.BENCH_SECONDS ?? 3),
  connections: Number(env.BENCH_CONNECTIONS ?? 16),
};

const create = SCENARIOS.find((scenario) => scenario.id === 'e');
const dialect = DIALECTS.tablegate;
const plain = (random) => create.request(dialect, random);
const representation = (random) => {
  const request = plain(random);
  return { ...request, headers: { ...request.headers, prefer: 'return=representation' } };
};

/** Both servers under load at once, `loads[i]` on `servers[i]`; CPU µs per request and req/s. */
async function together(servers, loads, seed, seconds) {
  const before = servers.map((server) => cpuSeconds(server.pid));
  const tallies = servers.map(() => new LoadTally());
  await Promise.all(
    servers.map((server, i) => {
      const random = seededRandom(seed + i);
      return runLoad({
        base: server.base,
        connections: settings.connections,
        seconds,
        next: () => loads[i](random),
        tally: tallies[i],
      });
    }),
  );
  return servers.map((server, i) => {
    const tally = tallies[i];
    tally.requireClean(server.key);
    return { us: ((cpuSeconds(server.pid) - before[i]) / tally.responses) * 1e6, rps: tally.rps };
  });
}

/** One answer of each kind, checked: the plain body, and the same with the row in `rows`. */
async function check(base) {
  const random = seededRandom(1);
  const request = representation(random);
  const response = await fetch(base + request.path, request);
  const text = await response.text();
  const body = JSON.parse(text);
  const sent = JSON.parse(request.body);
  const [row] = body?.rows ?? [];
  const ok =
    response.status === 200 &&
    response.headers.get('preference-applied') === 'return=representation' &&
    row?.id === body.insertId &&
    row?.name === sent.name &&
    body.rows.length === 1;
  if (!ok) throw new Error(`return=representation answered ${text.slice(0, 300)}`);
}

await benchSession('representation', async ({ db, tmp }) => {
  const definition = SERVERS.find((s) => s.key === 'tablegate');
  const servers = [];
  for (const key of ['X', 'Y']) {
    servers.push(await definition.start({ db, tmp, poolSize: 10, cli: CLI, key }));
  }
  await check(servers[0].base);
  console.log(`${CLI}, twice`);
  console.log(
    `${settings.rounds} rounds × ${settings.seconds} s, ${settings.connections} connections to each, both at once, loads swapped every round\n`,
  );
  await together(servers, [plain, representation], 999, 2); // warm-up
  await together(servers, [representation, plain], 998, 2);
  const rounds = [];
  for (let round = 0; round < settings.rounds; round++) {
    const swapped = round % 2 === 1;
    const loads = swapped ? [representation, plain] : [plain, representation];
    const measured = await together(servers, loads, 1000 + round, settings.seconds);
    const [p, r] = swapped ? [measured[1], measured[0]] : measured;
    rounds.push({ plain: p, representation: r });
  }
  console.log(
    '| round | plain µs/req | representation µs/req | CPU ratio | plain req/s | representation req/s | req/s ratio |',
  );
  console.log('|--:|--:|--:|--:|--:|--:|--:|');
  rounds.forEach(({ plain: p, representation: r }, i) => {
    console.log(
      `| ${i + 1} | ${p.us.toFixed(1)} | ${r.us.toFixed(1)} | ${(r.us / p.us).toFixed(3)} | ${p.rps.toFixed(0)} | ${r.rps.toFixed(0)} | ${(p.rps / r.rps).toFixed(3)} |`,
    );
  });
  const cpu = median(rounds.map(({ plain: p, representation: r }) => r.us / p.us));
  const rps = median(rounds.map(({ plain: p, representation: r }) => p.rps / r.rps));
  console.log(
    `\nmedian cost of return=representation: ${cpu.toFixed(3)} × the gateway CPU per create, ${rps.toFixed(3)} × the time per create (plain req/s ÷ representation req/s)`,
  );
});
