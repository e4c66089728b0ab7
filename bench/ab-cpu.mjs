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
 * cost; BENCH_AB_POLICY=both: A with the policy too, to compare two builds' policy paths), BENCH_SCENARIOS (default a,b,c,e,f; also m), BENCH_ROUNDS (8), BENCH_SECONDS (3),
 * BENCH_CONNECTIONS (16 per server), BENCH_AB_PIN=1 (both servers share the machine's last CPU,
 * the load generator the others: on a machine where two processes of one build differed in CPU
 * per request by up to 30 % unpinned, they differed by 0–5 % pinned), BENCH_AB_A_NODE_ARGS and
 * BENCH_AB_B_NODE_ARGS (Node options for that server alone, e.g. `--use-largepages=on`: the same
 * build with and without one), BENCH_DB_* (bench/README.md).
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
  scenarios: (env.BENCH_SCENARIOS ?? 'a,b,c,e,f').split(',').map((s) => s.trim()),
  rounds: Number(env.BENCH_ROUNDS ?? 8),
  seconds: Number(env.BENCH_SECONDS ?? 3),
  connections: Number(env.BENCH_CONNECTIONS ?? 16),
  pin: env.BENCH_AB_PIN === '1',
};
if (!settings.a) {
  process.stderr.write(
    'BENCH_AB_A must name the other build (BENCH_AB_A=<dir>/dist/cli.js), or BENCH_AB_POLICY=1\n',
  );
  process.exit(2);
}

/** Both servers under the same load at once; CPU µs per request of each. */
function together(servers, scenario, seed, seconds) {
  return loadTogether(servers, {
    connections: settings.connections,
    seconds,
    nextFor: () => {
      const random = seededRandom(seed);
      return () => scenario.request(DIALECTS.tablegate, random);
    },
  });
}

await benchSession('ab', async ({ db, tmp }) => {
  const servers = [];
  const plainServer = SERVERS.find((s) => s.key === 'tablegate');
  const policyServer = SERVERS.find((s) => s.key === 'tablegate-policy');
  for (const [key, cli] of [
    ['A', settings.a],
    ['B', settings.b],
  ]) {
    const definition = (key === 'B' && policy) || policyOnA ? policyServer : plainServer;
    const extraNodeArgs = (env[`BENCH_AB_${key}_NODE_ARGS`] ?? '').split(' ').filter(Boolean);
    servers.push(await definition.start({ db, tmp, poolSize: 10, cli, key, extraNodeArgs }));
  }
  if (settings.pin) pinServers(servers);
  const withPolicy = ' --policy (the bench policy)';
  console.log(
    `A: ${settings.a}${policyOnA ? withPolicy : ''}\nB: ${settings.b}${policy ? withPolicy : ''}`,
  );
  console.log(
    `${settings.rounds} rounds × ${settings.seconds} s, ${settings.connections} connections to each, both at once${settings.pin ? ', both on one CPU' : ''}\n`,
  );
  console.log(
    '| scenario | A µs/req | B µs/req | B ÷ A CPU (median) | B ÷ A req/s | rounds (B ÷ A CPU) |',
  );
  console.log('|---|--:|--:|--:|--:|---|');
  for (const [index, scenario] of SCENARIOS.entries()) {
    // Load scenarios of plain open mode ((h) needs auth-mode servers and tokens), and those only
    // tablegate runs ((m): both builds are tablegate).
    const plain =
      scenario.kind === 'load' &&
      (scenario.servers === undefined || scenario.servers.every((key) => key === 'tablegate'));
    if (!settings.scenarios.includes(scenario.id) || !plain) continue;
    await together(servers, scenario, 999, 2); // warm-up
    const rounds = [];
    for (let round = 0; round < settings.rounds; round++) {
      rounds.push(await together(servers, scenario, 1000 * (index + 1) + round, settings.seconds));
    }
    const cpu = rounds.map(([a, b]) => b.us / a.us);
    const rps = rounds.map(([a, b]) => b.rps / a.rps);
    console.log(
      `| ${scenario.id} | ${median(rounds.map(([a]) => a.us)).toFixed(1)} | ${median(rounds.map(([, b]) => b.us)).toFixed(1)} | ${median(cpu).toFixed(3)} | ${median(rps).toFixed(3)} | ${cpu.map((r) => r.toFixed(2)).join(' ')} |`,
    );
  }
});
