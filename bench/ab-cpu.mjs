#!/usr/bin/env node
/**
 * Two builds of tablegate side by side, loaded *at the same time*: the CPU each server spends per
 * request, and the ratio B ÷ A, round by round. On a shared 2-core machine the same server's CPU
 * per request moves by ±20 % from one run to the next (the hypervisor, the load generator and
 * MariaDB share the cores), and `npm run bench` measures servers one after the other, so a
 * change of a few per cent drowns. Loaded together, both builds meet the same machine at the
 * same moment and their ratio keeps what differs between them.
 *
 *   npm run build && BENCH_AB_A=/path/to/old/dist/cli.js node bench/ab-cpu.mjs
 *   npm run build && BENCH_AB_POLICY=1 BENCH_SCENARIOS=a,b node bench/ab-cpu.mjs
 *
 * Settings: BENCH_AB_A (the build to compare with; required unless BENCH_AB_POLICY), BENCH_AB_B
 * (default: this checkout's dist/cli.js), BENCH_AB_POLICY=1 (B runs with the bench's policy, as
 * `tablegate --policy` in `npm run bench`; A defaults to the same build as B: the policy's own
 * cost; BENCH_AB_POLICY=both: A with the policy too, to compare two builds' policy paths),
 * BENCH_SCENARIOS (default a,b,c,d,e,f,h,i,m: the load scenarios of bench/lib/scenarios.mjs and
 * the big read (d); also j, a256, e256), BENCH_ROUNDS (8), BENCH_SECONDS (3),
 * BENCH_CONNECTIONS (16 per server), BENCH_AB_PIN=1 (both servers share the machine's last CPU,
 * the load generator the others: on a machine where two processes of one build differed in CPU
 * per request by up to 30 % unpinned, they differed by 0–5 % pinned), BENCH_AB_A_NODE_ARGS and
 * BENCH_AB_B_NODE_ARGS (Node options for that server alone, e.g. `--use-largepages=on`: the same
 * build with and without one), BENCH_AB_BIG_REQUESTS (requests per round of (d), 6), BENCH_DB_*
 * (bench/README.md).
 *
 * What a scenario needs, both builds get alike: (i) its order tables, made before the servers
 * start; (h) a second pair of servers in auth mode (`tablegate run auth`, one login each, its
 * token on every request; without the policy, whatever BENCH_AB_POLICY says); (d), 100,000 rows
 * an answer, a fixed number of requests per round on one connection each, every one read to its
 * end (a round of seconds would cut the last answer off and count its CPU with none). Before its
 * rounds every scenario's answer is checked once on each server (scenarios.mjs), so that a
 * build that answered something else, or less, fails instead of looking cheap.
 */
import { median } from './lib/report.mjs';
import { DIALECTS, SCENARIOS, seededRandom } from './lib/scenarios.mjs';
import { CLI, SERVERS } from './lib/servers.mjs';
import { benchSession } from './lib/session.mjs';
import { loadTogether, pinServers } from './lib/together.mjs';

const env = process.env;
const policy = env.BENCH_AB_POLICY === '1' || env.BENCH_AB_POLICY === 'both';
const policyOnA = env.BENCH_AB_POLICY === 'both';
const settings = {
  a: env.BENCH_AB_A ?? (policy ? (env.BENCH_AB_B ?? CLI) : undefined),
  b: env.BENCH_AB_B ?? CLI,
  scenarios: (env.BENCH_SCENARIOS ?? 'a,b,c,d,e,f,h,i,m').split(',').map((s) => s.trim()),
  rounds: Number(env.BENCH_ROUNDS ?? 8),
  seconds: Number(env.BENCH_SECONDS ?? 3),
  connections: Number(env.BENCH_CONNECTIONS ?? 16),
  pin: env.BENCH_AB_PIN === '1',
  bigRequests: Number(env.BENCH_AB_BIG_REQUESTS ?? 6),
};
if (!settings.a) {
  process.stderr.write(
    'BENCH_AB_A must name the other build (BENCH_AB_A=<dir>/dist/cli.js), or BENCH_AB_POLICY=1\n',
  );
  process.exit(2);
}

/** Whether the scenario runs on the auth-mode pair ((h)) rather than the plain one. */
const needsAuth = (scenario) =>
  scenario.servers?.includes('tablegate-auth') === true && !scenario.servers.includes('tablegate');
// Load scenarios and the big read that tablegate runs; the upload (g) is measured otherwise.
const measured = SCENARIOS.filter(
  (s) =>
    settings.scenarios.includes(s.id) &&
    (s.kind === 'load' || s.kind === 'big') &&
    (s.servers === undefined || s.servers.some((key) => key.startsWith('tablegate'))),
);

/** Both servers under the same load at once; CPU µs per request of each. */
function together(servers, scenario, seed, { seconds, amount }) {
  const big = scenario.kind === 'big';
  return loadTogether(servers, {
    connections: scenario.connections ?? (big ? 1 : settings.connections),
    // A 100,000-row answer took over 10 s (autocannon's default) beside the other build on one
    // CPU of a machine at load average 15.
    ...(big ? { timeoutSeconds: 120 } : {}),
    ...(amount === undefined ? { seconds } : { amount }),
    nextFor: (i) => {
      const dialect = servers[i].dialect ?? DIALECTS.tablegate;
      const random = seededRandom(seed);
      return () => scenario.request(dialect, random);
    },
  });
}

/** One answer of each server checked against the database (scenarios.mjs); throws if wrong. */
async function checkAnswers(servers, scenario, admin) {
  for (const server of servers) {
    const dialect = server.dialect ?? DIALECTS.tablegate;
    let check;
    if (scenario.kind === 'big') {
      const request = scenario.request(dialect);
      const answer = await fetch(server.base + request.path);
      const text = await answer.text();
      check =
        answer.status === 200
          ? await scenario.checkBody(dialect, text, admin)
          : { ok: false, reason: `status ${answer.status}: ${text.slice(0, 160)}` };
    } else {
      check = await scenario.check(dialect, server.base, admin);
    }
    if (!check.ok) {
      throw new Error(`${server.key}, scenario ${scenario.id}: wrong answer: ${check.reason}`);
    }
  }
}

await benchSession('ab', async ({ db, tmp, admin }) => {
  for (const scenario of measured) {
    if (scenario.setup) {
      process.stderr.write(`setting up scenario ${scenario.id}…\n`);
      await scenario.setup(admin);
    }
  }
  const servers = [];
  const authServers = [];
  const plainServer = SERVERS.find((s) => s.key === 'tablegate');
  const policyServer = SERVERS.find((s) => s.key === 'tablegate-policy');
  const authServer = SERVERS.find((s) => s.key === 'tablegate-auth');
  for (const [key, cli] of [
    ['A', settings.a],
    ['B', settings.b],
  ]) {
    const definition = (key === 'B' && policy) || policyOnA ? policyServer : plainServer;
    const extraNodeArgs = (env[`BENCH_AB_${key}_NODE_ARGS`] ?? '').split(' ').filter(Boolean);
    servers.push(await definition.start({ db, tmp, poolSize: 10, cli, key, extraNodeArgs }));
    if (measured.some(needsAuth)) {
      authServers.push(
        await authServer.start({ db, tmp, poolSize: 10, cli, key: `${key}-auth`, extraNodeArgs }),
      );
    }
  }
  if (settings.pin) pinServers([...servers, ...authServers]);
  const withPolicy = ' --policy (the bench policy)';
  console.log(
    `A: ${settings.a}${policyOnA ? withPolicy : ''}\nB: ${settings.b}${policy ? withPolicy : ''}`,
  );
  console.log(
    `${settings.rounds} rounds × ${settings.seconds} s (d: ${settings.bigRequests} requests on one connection), ${settings.connections} connections to each, both at once${settings.pin ? ', both on one CPU' : ''}\n`,
  );
  console.log(
    '| scenario | A µs/req | B µs/req | B ÷ A CPU (median) | B ÷ A req/s | rounds (B ÷ A CPU) |',
  );
  console.log('|---|--:|--:|--:|--:|---|');
  for (const scenario of measured) {
    const index = SCENARIOS.indexOf(scenario);
    const pair = needsAuth(scenario) ? authServers : servers;
    await checkAnswers(pair, scenario, admin);
    const big = scenario.kind === 'big';
    const amount = big ? settings.bigRequests : scenario.requestsPerRound;
    await together(pair, scenario, 999, big ? { amount: 1 } : { seconds: 2, amount }); // warm-up
    const rounds = [];
    for (let round = 0; round < settings.rounds; round++) {
      const seed = 1000 * (index + 1) + round;
      rounds.push(await together(pair, scenario, seed, { seconds: settings.seconds, amount }));
    }
    const cpu = rounds.map(([a, b]) => b.us / a.us);
    const rps = rounds.map(([a, b]) => b.rps / a.rps);
    console.log(
      `| ${scenario.id} | ${median(rounds.map(([a]) => a.us)).toFixed(1)} | ${median(rounds.map(([, b]) => b.us)).toFixed(1)} | ${median(cpu).toFixed(3)} | ${median(rps).toFixed(3)} | ${cpu.map((r) => r.toFixed(2)).join(' ')} |`,
    );
  }
});
