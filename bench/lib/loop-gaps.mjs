/**
 * Preloaded into a gateway (`node --import <this file>`, started with an IPC channel): how long
 * its event loop was held, measured inside the process. A 1 ms timer notes, at each turn, the
 * wall time and the main thread's CPU time (/proc/self/task/<pid>/schedstat, nanoseconds on the
 * CPU): a gap between two turns is the loop held, and the CPU spent in it is what the process
 * did meanwhile, which other processes on a loaded machine do not stretch (they stretch the
 * wall time only). Also the garbage collections' pauses: all of them, the longest, and the count
 * and longest of the full (mark-compact) ones.
 * The message `loop-gaps` answers what was seen since the last one, and starts anew.
 */
import { readFileSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';

const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;

/** The main thread's time on the CPU, in ms (NaN where /proc does not tell it). */
function cpuMs() {
  try {
    return Number(readFileSync(SCHEDSTAT, 'latin1').split(' ')[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

let seen;
function reset() {
  seen = {
    wallMs: 0,
    wallCpuMs: 0,
    cpuMs: 0,
    cpuWallMs: 0,
    over10: 0,
    gcMs: 0,
    longestGcMs: 0,
    fullGcs: 0,
    fullGcMs: 0,
  };
}
reset();

let lastWall = performance.now();
let lastCpu = cpuMs();
function turn() {
  const wall = performance.now();
  const cpu = cpuMs();
  const gap = { wall: wall - lastWall, cpu: cpu - lastCpu };
  if (gap.wall > seen.wallMs) Object.assign(seen, { wallMs: gap.wall, wallCpuMs: gap.cpu });
  if (gap.cpu > seen.cpuMs) Object.assign(seen, { cpuMs: gap.cpu, cpuWallMs: gap.wall });
  if (gap.cpu > 10) seen.over10++;
  lastWall = wall;
  lastCpu = cpu;
  setTimeout(turn, 1).unref();
}
setTimeout(turn, 1).unref();

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    seen.gcMs += entry.duration;
    seen.longestGcMs = Math.max(seen.longestGcMs, entry.duration);
    if (entry.detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
    seen.fullGcs++;
    seen.fullGcMs = Math.max(seen.fullGcMs, entry.duration);
  }
}).observe({ entryTypes: ['gc'] });

process.on('message', (message) => {
  if (message !== 'loop-gaps') return;
  process.send({ loopGaps: seen });
  reset();
});
process.channel?.unref();
