/**
 * `-h db1,db2,…`: which host the execute stage uses, and the move to the next one that answers
 * when it stops answering. One host at a time for everything: two Galera nodes written at once
 * fail each other's transactions at certification, and a primary and a replica are never both
 * writers. No fail-back while the host in use works: going back and forth between hosts that
 * come and go (flapping) would split the writes for nothing.
 */

import { reasonOf } from '../db/errors.js';
import { type DbHost, hostLabel } from '../db/pool.js';
import { HOST_SEARCH_INTERVAL_MS } from '../limits.js';

/** What the switch needs of a host's connections (backend.ts builds them). */
export interface HostBackend {
  readonly host: DbHost;
  /** True when the host answers a ping sent now. */
  ping(fresh: true): Promise<boolean>;
  /** The host stopped answering: fail what is in flight there, close without waiting. */
  retire(): void;
  /** A clean close (shutdown). */
  close(): Promise<void>;
}

export interface HostEvents {
  /** The host in use stopped answering and `to` answered: said once per switch. */
  switched(from: string, to: string): void;
}

/** No host of `-h` answered at start; the message names every host tried and why. */
export class NoHostAnswered extends Error {
  override readonly name = 'NoHostAnswered';
  constructor(failures: readonly { host: DbHost; error: unknown }[]) {
    super(failures.map(({ host, error }) => `${hostLabel(host)}: ${reasonOf(error)}`).join('; '));
  }
}

/** The other hosts, in the order they are tried: round-robin after `current`, never itself. */
export function searchOrder(count: number, current: number): number[] {
  return Array.from({ length: count - 1 }, (_, step) => (current + 1 + step) % count);
}

export class HostSwitch<B extends HostBackend> {
  events: HostEvents = { switched: () => {} };
  private searching: Promise<void> | null = null;
  private lastFailedSearch = Number.NEGATIVE_INFINITY;
  private closed = false;

  private constructor(
    private readonly hosts: readonly DbHost[],
    private index: number,
    private current: B,
    private readonly open: (host: DbHost) => Promise<B>,
  ) {}

  /**
   * Opens the first host that answers, in the order given. With one host its own error passes
   * through unchanged (the start-up line is as it always was); with several, NoHostAnswered.
   */
  static async start<B extends HostBackend>(
    hosts: readonly DbHost[],
    open: (host: DbHost) => Promise<B>,
  ): Promise<HostSwitch<B>> {
    const failures: { host: DbHost; error: unknown }[] = [];
    for (const [index, host] of hosts.entries()) {
      try {
        return new HostSwitch(hosts, index, await open(host), open);
      } catch (error) {
        if (hosts.length === 1) throw error;
        failures.push({ host, error });
      }
    }
    throw new NoHostAnswered(failures);
  }

  /** The host in use. */
  get backend(): B {
    return this.current;
  }

  /**
   * While a search for another host is under way, a promise that settles when it is over (the
   * host in use is then the one it chose, or the same); else null. A retry waits for it rather
   * than go back to the host its first attempt failed on (the cluster drill saw reads and
   * writes answered 503 there in the moment before the switch).
   */
  get settling(): Promise<void> | null {
    return this.searching;
  }

  /**
   * Something on `failed` looked like a host that stopped answering (a lost connection, a
   * refused connect, a ping without answer). If it is still the host in use and a fresh ping
   * confirms it (unless `confirmed`: the ping itself went unanswered), the next host that
   * answers takes over. Many failing requests make one search:
   * one runs at a time, a host left already is not searched from again, and after a search that
   * found nobody the next waits HOST_SEARCH_INTERVAL_MS (every host down: no connect storm).
   */
  suspect(failed: B, confirmed = false): void {
    if (this.hosts.length < 2 || this.closed || failed !== this.current || this.searching) return;
    if (Date.now() - this.lastFailedSearch < HOST_SEARCH_INTERVAL_MS) return;
    this.searching = this.search(failed, confirmed).finally(() => {
      this.searching = null;
    });
  }

  /** Waits for a search under way (what it opened is closed too), then closes the host in use. */
  async close(): Promise<void> {
    this.closed = true;
    await this.searching;
    await this.current.close();
  }

  private async search(failed: B, confirmed: boolean): Promise<void> {
    // A connection can be lost while its host is fine (killed, timed out): then stay. A frozen
    // host is not asked twice (each unanswered ping costs HEALTH_TIMEOUT_MS).
    if (!confirmed && (await failed.ping(true))) return;
    for (const index of searchOrder(this.hosts.length, this.index)) {
      let next: B;
      try {
        next = await this.open(this.hosts[index] as DbHost);
      } catch {
        continue;
      }
      if (this.closed) {
        await next.close();
        return;
      }
      this.current = next;
      this.index = index;
      failed.retire();
      this.events.switched(hostLabel(failed.host), hostLabel(next.host));
      return;
    }
    this.lastFailedSearch = Date.now();
  }
}
