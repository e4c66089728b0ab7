#!/usr/bin/env node
/**
 * What one big streamed read leaves behind: the CPU per request of scenario (a), one row by key,
 * before and after three reads of all 100,000 rows (scenario (d)), for tablegate and the floor,
 * each alone on the machine. Found in issue 17's fifth pass: after such reads tablegate's small
 * requests cost ~30 % more CPU for as long as it runs (measured over 30 s), the floor's hardly
 * more; in `npm run bench` that lands on (e), (f) and (h), which run after (d).
 *
 *   npm run build && node bench/after-big-read.mjs
 *
 * Settings: BENCH_SERVERS (default tablegate,floor), BENCH_ROUNDS (windows before and after, 4),
 * BENCH_SECONDS (3), BENCH_CONNECTIONS (32), BENCH_TABLEGATE_CLI, BENCH_DB_* (bench/README.md).
 */
import { LoadTally, runLoad, timedGet } from './lib/load.mjs';
import { cpuSeconds, waitForQuiet } from './lib/proc.mjs';
import { stopChild } from './lib/processes.mjs';
import { median } from './lib/report.mjs';
import { DIALECTS, SCENARIOS, seededRandom } from './lib/scenarios.mjs';
import { CLI, SERVERS } from './lib/servers.mjs';
import { benchSession } from './lib/session.mjs';

const env = process.env;
const settings = {
  servers: (env.BENCH_SERVERS ?? 'tablegate,floor').split(',').map((s) => s.trim()),
  windows: Number(env.BENCH_ROUNDS ?? 4),
  seconds: Number(env.BENCH_SECONDS ?? 3),
  connections: Number(env.BENCH_CONNECTIONS ?? 32),
  cli: env.BENCH_TABLEGATE_CLI ?? CLI,
};
const BIG_READS = 3;
const log = (text) => process.stderr.write(`${text}\n`);
const oneRow = SCENARIOS.find((s) => s.id === 'a');

/** CPU µs per request of scenario (a) on `server`, one window per entry. */
async function windows(server, dialect, count, seed) {
  const result = [];
  for (let i = 0; i < count; i++) {
    await waitForQuiet();
    const random = seededRandom(seed + i);
    const tally = new LoadTally();
    const before = cpuSeconds(server.pid);
    await runLoad({
      base: server.base,
      connections: settings.connections,
      seconds: settings.seconds,
      next: () => oneRow.request(dialect, random),
      tally,
    });
    tally.requireClean(server.key);
    result.push(((cpuSeconds(server.pid) - before) / tally.responses) * 1e6);
  }
  return result;
}

await benchSession('big-read', async ({ db, tmp }) => {
  console.log(
    `(a) under ${settings.connections} connections, ${settings.windows} windows × ${settings.seconds} s before and after ${BIG_READS} reads of all rows; CPU µs per request\n`,
  );
  console.log('| server | before (windows) | after (windows) | after ÷ before (medians) |');
  console.log('|---|---|---|--:|');
  for (const key of settings.servers) {
    const definition = SERVERS.find((s) => s.key === key);
    if (definition === undefined) throw new Error(`unknown server ${key}`);
    const dialect = DIALECTS[key];
    const server = await definition.start({ db, tmp, poolSize: 10, cli: settings.cli, key });
    try {
      log(`${key}: warm-up, then (a) before`);
      await windows(server, dialect, 1, 999);
      const before = await windows(server, dialect, settings.windows, 1000);
      log(`${key}: ${BIG_READS} reads of all rows, then (a) after`);
      for (let i = 0; i < BIG_READS; i++) {
        const answer = await timedGet(server.base, dialect.all().path);
        if (answer.status !== 200)
          throw new Error(`${key}: the big read answered ${answer.status}`);
      }
      const after = await windows(server, dialect, settings.windows, 2000);
      const shown = (list) => list.map((us) => us.toFixed(1)).join(', ');
      console.log(
        `| ${key} | ${shown(before)} | ${shown(after)} | ${(median(after) / median(before)).toFixed(2)} |`,
      );
    } finally {
      await stopChild(server.child).catch(() => {});
    }
  }
});
