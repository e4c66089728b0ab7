/**
 * A server's resident memory and CPU time from /proc (proc(5)). The peak of a scenario is VmHWM
 * after resetting it (writing 5 to /proc/<pid>/clear_refs, Linux ≥ 4.0) and, where that reset is
 * refused, the highest VmRSS sampled while the scenario ran. CPU time (user + system) per request
 * is a measure that other work on the machine disturbs much less than requests per second.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const KIB = 1024;

/** VmRSS and VmHWM in bytes, or null when the process is gone. */
export function readMemory(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const field = (name) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
    return match ? Number(match[1]) * KIB : null;
  };
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Watches one process from start() to stop(): its RSS at start (idle) and its peak since. */
export class PeakWatch {
  constructor(pid, intervalMs = 50) {
    this.pid = pid;
    this.intervalMs = intervalMs;
    this.timer = null;
  }

  start() {
    const now = readMemory(this.pid);
    this.idle = now?.rss ?? null;
    this.sampledPeak = this.idle ?? 0;
    this.reset = resetPeak(this.pid);
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
    return this;
  }

  sample() {
    const now = readMemory(this.pid);
    if (now?.rss && now.rss > this.sampledPeak) this.sampledPeak = now.rss;
  }

  /** `{ idle, peak }` in bytes. */
  stop() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sample();
    const now = readMemory(this.pid);
    const hwm = this.reset && now?.hwm ? now.hwm : 0;
    return { idle: this.idle, peak: Math.max(hwm, this.sampledPeak) || null };
  }
}

export function mib(bytes) {
  return bytes === null || bytes === undefined ? null : bytes / (KIB * KIB);
}

let ticksPerSecond = null;

/** User + system CPU seconds the process has used so far, or null when it is gone. */
export function cpuSeconds(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  // Fields after the command name (which may hold spaces) start with field 3, the state;
  // utime and stime are fields 14 and 15.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/**
 * The machine's CPU time so far, from the first line of /proc/stat (clock ticks): all of it and
 * the part the hypervisor gave to other guests (steal). On a shared VM a busy neighbour steals
 * cycles and every figure of a run moves with it, so the report says how much was stolen.
 */
export function machineTicks() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1);
  const ticks = fields.map(Number);
  return { total: ticks.slice(0, 8).reduce((sum, n) => sum + n, 0), steal: ticks[7] ?? 0 };
}

/** The share of the machine's CPU time stolen between two machineTicks() readings, in %. */
export function stolenPercent(before, after) {
  const total = after.total - before.total;
  return total > 0 ? (100 * (after.steal - before.steal)) / total : 0;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Busy and all CPU ticks of the machine so far (/proc/stat): busy leaves out idle, iowait, steal. */
function busyTicks() {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n', 1)[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = user + nice + system + irq + softirq;
  return { busy, total: busy + idle + iowait + steal };
}

/**
 * Waits until the machine is quiet — at most `busyShare` of its CPU busy over `windowMs` — or
 * `maxMs` has passed, and returns how long it waited (ms). The load generator ends a run without
 * waiting for the answers still in flight: a slow server, and the database running its queries,
 * go on working on them for up to seconds, inside the next server's measured run. Without this,
 * whichever server followed the slowest one in the round order paid for it in every round.
 */
export async function waitForQuiet({ windowMs = 200, busyShare = 0.1, maxMs = 10_000 } = {}) {
  const started = performance.now();
  let before = busyTicks();
  for (;;) {
    await sleep(windowMs);
    const now = busyTicks();
    const total = now.total - before.total;
    const quiet = total > 0 && (now.busy - before.busy) / total <= busyShare;
    before = now;
    const waited = performance.now() - started;
    if (quiet || waited >= maxMs) return waited;
  }
}
