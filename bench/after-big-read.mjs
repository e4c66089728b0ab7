#!/usr/bin/env node
/**
 * What one big streamed read leaves behind: the CPU per request of scenario (a), one row by key,
 * before and after three reads of all 100,000 rows (scenario (d)), for tablegate and the floor,
 * each alone on the machine, and what V8's young-generation collections promoted to the old
 * generation per request meanwhile (each server runs with --trace-gc-nvp into its log). Found in
 * the fifth pass of the read work (bench/README.md): after such reads tablegate's small requests
 * cost ~30 % more CPU for as long as it ran; the sixth pass found why (~3 KB of every request
 * promoted: src/execute/acquire.ts) and fixed it. The promoted bytes are the steady signal; the CPU
 * moves with the machine.
 *
 *   npm run build && node bench/after-big-read.mjs
 *
 * Settings: BENCH_SERVERS (default tablegate,floor), BENCH_ROUNDS (windows before and after, 4),
 * BENCH_SECONDS (3), BENCH_CONNECTIONS (32), BENCH_TABLEGATE_CLI, BENCH_DB_* (bench/README.md).
 */
import { statSync } from 'node:fs';
import { collectionsSince, TRACE_GC } from './lib/gc.mjs';
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

/**
 * Scenario (a) on `server`, one entry per window: CPU µs per request, bytes promoted per
 * request, full collections.
 */
async function windows(server, dialect, count, seed) {
  const result = [];
  for (let i = 0; i < count; i++) {
    await waitForQuiet();
    const random = seededRandom(seed + i);
    const tally = new LoadTally();
    const logAt = statSync(server.logFile).size;
    const before = cpuSeconds(server.pid);
    await runLoad({
      base: server.base,
      connections: settings.connections,
      seconds: settings.seconds,
      next: () => oneRow.request(dialect, random),
      tally,
    });
    tally.requireClean(server.key);
    const cpu = cpuSeconds(server.pid) - before;
    const { promoted, full } = collectionsSince(server.logFile, logAt);
    result.push({
      us: (cpu / tally.responses) * 1e6,
      promoted: promoted / tally.responses,
      full,
    });
  }
  return result;
}

await benchSession('big-read', async ({ db, tmp }) => {
  console.log(
    `(a) under ${settings.connections} connections, ${settings.windows} windows × ${settings.seconds} s before and after ${BIG_READS} reads of all rows: CPU µs per request; bytes promoted to V8's old generation per request; full collections\n`,
  );
  console.log(
    '| server | CPU µs before (windows) | after | × (medians) | promoted B/req before | after | full GCs before | after |',
  );
  console.log('|---|---|---|--:|---|---|---|---|');
  for (const key of settings.servers) {
    const definition = SERVERS.find((s) => s.key === key);
    if (definition === undefined) throw new Error(`unknown server ${key}`);
    const dialect = DIALECTS[key];
    const server = await definition.start({
      db,
      tmp,
      poolSize: 10,
      cli: settings.cli,
      key,
      extraNodeArgs: [TRACE_GC],
    });
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
      const shown = (list, field, digits) => list.map((w) => w[field].toFixed(digits)).join(', ');
      const cpu = (list) => median(list.map((w) => w.us));
      console.log(
        `| ${key} | ${shown(before, 'us', 1)} | ${shown(after, 'us', 1)} | ${(cpu(after) / cpu(before)).toFixed(2)} | ${shown(before, 'promoted', 0)} | ${shown(after, 'promoted', 0)} | ${shown(before, 'full', 0)} | ${shown(after, 'full', 0)} |`,
      );
    } finally {
      await stopChild(server.child).catch(() => {});
    }
  }
});
