/**
 * Servers measured side by side, loaded at the same time: the CPU each spends per request (from
 * /proc), and the machine's last CPU for all of them (bench/ab-cpu.mjs, bench/framework-cost.mjs).
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { LoadTally, runLoad } from './load.mjs';
import { cpuSeconds } from './proc.mjs';

/**
 * The servers (every thread) on the last CPU, this process on the others: each then meets the
 * same core, its caches and its neighbours, in every round (taskset, util-linux).
 */
export function pinServers(servers) {
  const last = os.availableParallelism() - 1;
  if (last < 1) throw new Error('pinning the servers needs two CPUs or more');
  for (const { pid } of servers) execFileSync('taskset', ['-acp', String(last), String(pid)]);
  execFileSync('taskset', ['-acp', `0-${last - 1}`, String(process.pid)]);
}

/**
 * Every server under `connections` connections for `seconds` at once (or exactly `amount`
 * requests each, until the last is answered), the requests of each from `nextFor(index)`; CPU µs
 * per request and requests a second of each. A non-2xx answer throws.
 */
export async function loadTogether(
  servers,
  { connections, seconds, amount, nextFor, timeoutSeconds },
) {
  const before = servers.map(({ pid }) => cpuSeconds(pid));
  const tallies = servers.map(() => new LoadTally());
  await Promise.all(
    servers.map(({ base }, i) =>
      runLoad({
        base,
        connections,
        seconds,
        amount,
        timeoutSeconds,
        next: nextFor(i),
        tally: tallies[i],
      }),
    ),
  );
  return servers.map(({ pid, key }, i) => {
    const tally = tallies[i];
    tally.requireClean(key);
    return { us: ((cpuSeconds(pid) - before[i]) / tally.responses) * 1e6, rps: tally.rps };
  });
}
