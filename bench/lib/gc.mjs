/**
 * What V8's young-generation collections promoted to the old generation, from a server started
 * with `--trace-gc-nvp` (one `key=value` line per collection, written into its log file). Bytes
 * promoted per request is the signal that a request leaves something behind for longer than it
 * lives (bench/README.md, the sixth pass of the read work): it does not move with a busy machine
 * as CPU time and requests per second do.
 */
import { readFileSync, statSync } from 'node:fs';

/** The node flag that makes a server write its collections into its log. */
export const TRACE_GC = '--trace-gc-nvp';

/** Where the log ends now: the start of a measured window. */
export function logOffset(logFile) {
  return statSync(logFile).size;
}

/**
 * Since byte `from` of the log: bytes the scavenges promoted, and how many full (mark-compact)
 * collections ran.
 */
export function collectionsSince(logFile, from) {
  let promoted = 0;
  let full = 0;
  for (const line of readFileSync(logFile, 'latin1').slice(from).split('\n')) {
    const kind = /\bgc=(\w+)/.exec(line)?.[1];
    if (kind === 's') promoted += Number(/\bpromoted=(\d+)/.exec(line)?.[1] ?? 0);
    else if (kind === 'mc') full++;
  }
  return { promoted, full };
}
