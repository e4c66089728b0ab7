/**
 * mysql2 waits for a server's answer for ever. Every WATCHDOG_TICK_MS the watchdog looks at the
 * connections busy with a statement; when one has waited STATEMENT_ALIVE_CHECK_MS for its answer
 * it asks whether the server still answers (one shared ping on the control connection, bounded
 * by HEALTH_TIMEOUT_MS). When it does not — frozen, partitioned — the sockets of the statements
 * it waited for are destroyed, so they fail at once as DATABASE_UNAVAILABLE (never retried:
 * execute/retry.ts) and the pool drops them. A slow but live server answers the ping and is
 * left alone, however long its statements run.
 */
import type { Socket } from 'node:net';
import type { PoolConnection } from 'mysql2';
import { ServerSilent } from '../db/errors.js';
import { STATEMENT_ALIVE_CHECK_MS, WATCHDOG_TICK_MS } from '../limits.js';

/** A connection between statements. */
const IDLE = 0;

function socketOf(connection: PoolConnection): Socket {
  return (connection as unknown as { stream: Socket }).stream;
}

export class Watchdog {
  /**
   * When each connection's statement started; IDLE between statements. An entry is overwritten
   * per statement, never added and deleted: a long-lived Map with an entry added and deleted per
   * statement keeps what it held reachable from its retired tables (acquire.ts says how, issue
   * 17). The check drops the entries of connections that closed.
   */
  private readonly busySince = new Map<PoolConnection, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly isAlive: () => Promise<boolean>) {
    this.timer = setInterval(() => void this.check(), WATCHDOG_TICK_MS);
    this.timer.unref();
  }

  watch(connection: PoolConnection): void {
    this.busySince.set(connection, Date.now());
  }

  release(connection: PoolConnection): void {
    this.busySince.set(connection, IDLE);
  }

  close(): void {
    clearInterval(this.timer);
  }

  /**
   * The host was left for another (hosts.ts): every statement still running there fails now, as
   * a lost connection: retried where safe (execute/retry.ts), on the new host.
   */
  failAll(): void {
    this.close();
    for (const [connection, since] of [...this.busySince]) {
      if (since === IDLE) continue;
      this.fail(
        connection,
        Object.assign(new Error('The gateway left this MySQL host'), { code: 'ETIMEDOUT' }),
      );
    }
  }

  private async check(): Promise<void> {
    const startedBefore = Date.now() - STATEMENT_ALIVE_CHECK_MS;
    // Each with the start of its statement: a connection that finished it while the ping was on
    // its way, and began another, is not cut for the old one (that one got its answer).
    const overdue = new Map<PoolConnection, number>();
    for (const [connection, since] of this.busySince) {
      if (since === IDLE) {
        if (socketOf(connection).destroyed) this.busySince.delete(connection);
      } else if (since <= startedBefore) overdue.set(connection, since);
    }
    if (overdue.size === 0 || (await this.isAlive())) return;
    for (const [connection, since] of overdue) {
      if (this.busySince.get(connection) === since) this.fail(connection, new ServerSilent());
    }
  }

  private fail(connection: PoolConnection, error: Error): void {
    if ((this.busySince.get(connection) ?? IDLE) === IDLE) return; // it finished meanwhile
    this.busySince.delete(connection);
    socketOf(connection).destroy(error);
  }
}
