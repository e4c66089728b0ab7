/**
 * Pool connections handed out fairly between client addresses, within a bound.
 *
 * Fair: mysql2's pool serves waiting requests first come, first served, so one address that
 * sends many requests (or many slow ones) takes the pool while others wait behind it. Here a
 * request waits in our queue instead, never in mysql2's: the pool is asked for a connection only
 * when it has one free (or may open one). Alone, an address may use the whole pool; when a
 * connection comes back and several addresses wait, it goes to the waiting address that holds
 * the fewest connections (among equals, the one whose next request is lightest, then the one
 * that has waited for a turn longest), and that address's lightest request takes it (among
 * equals, its oldest). Lightest: the fewest rows estimated for its answer (CompiledRead.rows;
 * none known counts as light), so a one-row read passes the big streamed reads queued before it
 * rather than wait for each of them to be taken back in turn. So an address holding many
 * connections never gets the next one while another waits, and busy addresses end with equal
 * shares (docs/operations.md).
 * A held connection is given back by its statement, with one exception: a streamed read whose
 * client has taken nothing for SLOW_READER_MS holds its connection for a client that is not
 * reading. While any request waits, every such read is taken back at once (stream.ts ends it):
 * an address, or many behind one, that opens reads and never takes them cannot keep the pool
 * from anyone for longer than that (docs/operations.md). Whether a client takes anything is the
 * kernel's count of what it acknowledged (client-progress.ts): the process's own socket stands
 * still for a second at a time while a slow client reads. It is read only while a request waits
 * and some read has waited for its client a sweep's length, once per sweep for all of them.
 *
 * Bounded: mysql2's pool would wait for ever; we answer instead. When a wait passes
 * ALIVE_CHECK_MS the server is pinged on the control connection, and a server that does not
 * answer (frozen, partitioned) is 503 at once; a server that answers is only busy, so the request
 * keeps waiting up to `maxWaitMs` (then 503). Under load nearly every request waits, so the bounds
 * are not a timer pair per wait (four timer operations and three closures per request) but one
 * sweep every WAIT_SWEEP_MS over the waits in progress, running only while there are any. A bound
 * therefore fires up to WAIT_SWEEP_MS late, nothing a client can tell.
 *
 * No Set or Map gains and loses an entry per request. A long-lived one that does rebuilds its
 * table every few dozen requests, and V8 links each retired table to its successor and leaves the
 * retired one's entries in place; once the table has reached the old generation (one quiet second
 * is enough: a big streamed read), every successor is allocated there too. Every wait, with the
 * request its callback closes over, was then reachable from a dead old table until the next full
 * GC: each request's objects were promoted, and every small request after such a read cost
 * markedly more CPU (bench/after-big-read.mjs; bench/README.md, "Measurements behind the code"). So the waits in progress are
 * lists linked through the waits themselves, and the addresses are records kept while they are in
 * use and dropped in batches (IDLE_CLIENTS_KEPT), never one per request; an idle record holds no
 * wait.
 */
import type { Socket } from 'node:net';
import type { Pool, PoolConnection } from 'mysql2';
import { mapDbError } from '../db/errors.js';
import { databaseBusy, databaseUnavailable } from '../errors.js';
import {
  ALIVE_CHECK_MS,
  IDLE_CLIENTS_KEPT,
  LINE_LOOKAHEAD,
  SLOW_READER_MS,
  WAIT_SWEEP_MS,
} from '../limits.js';
import { clientProgress, type Progress } from './client-progress.js';

export interface AcquireBound {
  /** Resolves true when the server answers a ping (within about a second). */
  readonly isAlive: () => Promise<boolean>;
  /** The longest a request waits for a connection from a live but busy server. */
  readonly maxWaitMs: number;
}

/** Told once: the connection, or why there is none. */
export type Lent = (error: unknown, connection?: PoolConnection) => void;

/** The pool right now, read-only (for metrics). */
export interface PoolStats {
  /** Connections handed out to a statement. */
  readonly inUse: number;
  /** Open connections waiting in the pool for work. */
  readonly idle: number;
  /** Requests waiting for a connection. */
  readonly waiting: number;
}

/**
 * A streamed read whose flow waits for its client (stream.ts), listed while it does: one record
 * per read, linked in and out as the flow pauses and resumes (no Set entry per pause).
 */
export interface Stall {
  /** When the flow paused, set by the read before it is listed. */
  since: number;
  readonly connection: PoolConnection;
  /** Ends the read (statement stopped, response cut); its connection comes back by giveBack(). */
  readonly takeBack: (quietMs: number) => void;
  /** The client's TCP socket, if the read's answer goes to one (RowSink.socket). */
  readonly socket: () => Socket | null;
  /**
   * The bytes its client had taken when last looked at in this pause (-1: not yet), and for how
   * long since then it has taken nothing (in sweeps, so a busy spell of this process is not
   * counted against the client).
   */
  taken: number;
  quietMs: number;
  /**
   * How long it may take nothing before it is taken back: SLOW_READER_MS, or twice the longest
   * it ever took nothing and then read on, whichever is more (a client that reads in big gulps).
   */
  patience: number;
  /** Its neighbours in the list of stalls, oldest first; `listed` while it is in it. */
  earlier: Stall | null;
  later: Stall | null;
  listed: boolean;
}

/** For each socket, what its client has taken so far, or null: unknown (client-progress.ts). */
export type ProgressMeasure = (sockets: readonly (Socket | null)[]) => (Progress | null)[];

/** One client address's part of the pool. */
interface Client {
  readonly address: string;
  /** Connections lent to it, or asked of the pool for it, and not given back yet. */
  held: number;
  /** Its waits not yet handed to the pool, oldest first. */
  first: Wait | null;
  last: Wait | null;
  /**
   * The turn it stands in while it has queued waits: the line of clients that hold as many
   * connections as it did when it joined (`level`, -1 when in none), and its neighbours there.
   */
  level: number;
  before: Client | null;
  after: Client | null;
}

interface Wait {
  readonly since: number;
  /** The rows its answer is estimated to hold (0: unknown, or no answer of rows). */
  readonly rows: number;
  /** The server was asked whether it is alive for this wait. */
  asked: boolean;
  readonly done: Lent;
  readonly client: Client;
  /**
   * Its neighbours in the list of waits in progress; both null once it is out of it. Out of the
   * list is ended: `done` was told, or is told now by whoever took it out.
   */
  older: Wait | null;
  newer: Wait | null;
  /** In its client's queue (no connection asked for yet), with its neighbours there. */
  queued: boolean;
  ahead: Wait | null;
  behind: Wait | null;
}

/** The waits in progress, oldest first. */
class WaitList {
  oldest: Wait | null = null;
  private newest: Wait | null = null;

  add(wait: Wait): void {
    wait.older = this.newest;
    if (this.newest) this.newest.newer = wait;
    else this.oldest = wait;
    this.newest = wait;
  }

  /** Takes `wait` out of the list: false when it was not in it (any more). */
  take(wait: Wait): boolean {
    if (wait.older === null && this.oldest !== wait) return false;
    if (wait.older) wait.older.newer = wait.newer;
    else this.oldest = wait.newer;
    if (wait.newer) wait.newer.older = wait.older;
    else this.newest = wait.older;
    wait.older = null;
    wait.newer = null;
    return true;
  }
}

/** The client a lent connection is held by, kept on the connection itself (no map per loan). */
const HOLDER = Symbol('tablegate.holder');
/** Set on a connection whose read was taken back, until the connection comes back. */
const TAKEN = Symbol('tablegate.taken');
type Loaned = PoolConnection & { [HOLDER]?: Client | null; [TAKEN]?: boolean };

/** A queue of mysql2's pool, as far as we read it. */
interface Counted {
  readonly length: number;
}

/**
 * mysql2's pool has no public statistics; these are the queues its own code keeps
 * (lib/base/pool.js, 3.x; each made once, with the pool). Read in this one place so that a driver
 * change breaks one function.
 */
function queuesOf(pool: Pool): { all: Counted; free: Counted; waiting: Counted } {
  const queues = pool as unknown as Record<
    '_allConnections' | '_freeConnections' | '_connectionQueue',
    Counted | undefined
  >;
  const none: Counted = { length: 0 };
  return {
    all: queues._allConnections ?? none,
    free: queues._freeConnections ?? none,
    waiting: queues._connectionQueue ?? none,
  };
}

/** Hands out the connections of one pool, fairly and within the bound. */
export class Acquirer {
  private readonly waits = new WaitList();
  private sweeper: NodeJS.Timeout | undefined;
  private readonly clients = new Map<string, Client>();
  /** Past this many records, the idle ones are dropped (see the top of this file). */
  private forgetAt = IDLE_CLIENTS_KEPT;
  /**
   * The turns: `lines[n]` are the clients with queued waits that held n connections when they
   * joined it (the last line also more), first come first; `ends[n]` its last client.
   */
  private readonly lines: (Client | null)[];
  private readonly ends: (Client | null)[];
  /** Waits in the clients' queues (not handed to the pool yet). */
  private queued = 0;
  private readonly size: number;
  private closed = false;
  private readonly queues: ReturnType<typeof queuesOf>;
  /** The streamed reads waiting for their clients, the longest waiting first. */
  private oldestStall: Stall | null = null;
  private newestStall: Stall | null = null;
  /** Reads taken back whose connections have not come back yet, and all taken back so far. */
  private takingBack = 0;
  private takenBack = 0;
  private reclaimScheduled = false;
  /** When the stalls were last looked at (a look counts at most one sweep of quiet). */
  private lookedAt = 0;

  constructor(
    private readonly pool: Pool,
    private readonly bound: AcquireBound,
    private readonly progress: ProgressMeasure = clientProgress,
  ) {
    this.size = Math.max(1, pool.config.connectionLimit ?? 10);
    this.lines = new Array<Client | null>(this.size + 1).fill(null);
    this.ends = new Array<Client | null>(this.size + 1).fill(null);
    this.queues = queuesOf(pool);
  }

  /**
   * A connection to `done`, within the bound, in `address`'s fair turn; by callback, as every
   * statement's path needs no promise. Give it back with giveBack().
   */
  lend(address: string, done: Lent, rows = 0): void {
    const client = this.clientOf(address);
    const wait: Wait = {
      since: Date.now(),
      rows,
      asked: false,
      done,
      client,
      older: null,
      newer: null,
      queued: false,
      ahead: null,
      behind: null,
    };
    this.waits.add(wait);
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(() => this.sweep(), WAIT_SWEEP_MS);
      this.sweeper.unref();
    }
    if (this.closed || (this.queued === 0 && this.inUse() < this.size)) {
      this.ask(wait);
      return;
    }
    this.enqueue(wait);
    this.serve();
  }

  /** A streamed read's flow waits for its client from `stall.since` (see the top of this file). */
  stalled(stall: Stall): void {
    if (stall.listed) return;
    stall.listed = true;
    stall.taken = -1;
    stall.quietMs = 0;
    stall.earlier = this.newestStall;
    stall.later = null;
    if (this.newestStall) this.newestStall.later = stall;
    else this.oldestStall = stall;
    this.newestStall = stall;
  }

  /** The read's flow goes on (or the read is over): it is no longer taken back. */
  flowing(stall: Stall): void {
    if (!stall.listed) return;
    stall.listed = false;
    if (stall.earlier) stall.earlier.later = stall.later;
    else this.oldestStall = stall.later;
    if (stall.later) stall.later.earlier = stall.earlier;
    else this.newestStall = stall.earlier;
    stall.earlier = null;
    stall.later = null;
  }

  /**
   * Takes back a connection lent by lend(), and hands the pool's next free connection to whoever
   * is next in turn. `drop`: the connection is broken (or must not serve again): it is destroyed
   * rather than put back. Harmless on a connection already given back.
   */
  giveBack(connection: PoolConnection, drop = false): void {
    const loaned = connection as Loaned;
    if (loaned[TAKEN] === true) {
      loaned[TAKEN] = false;
      this.takingBack--;
    }
    const client = loaned[HOLDER];
    if (client !== undefined && client !== null) {
      loaned[HOLDER] = null;
      this.unhold(client);
    }
    if (drop) connection.destroy();
    else connection.release();
    if (this.queued > 0) this.serve();
  }

  /** The pool right now (for metrics). */
  stats(): PoolStats {
    const { free, waiting } = this.queues;
    return { inUse: this.inUse(), idle: free.length, waiting: this.queued + waiting.length };
  }

  /** Streamed reads taken back for another request since the pool opened (for metrics). */
  takenBackCount(): number {
    return this.takenBack;
  }

  /**
   * Stops the sweep (the pool is closing): the queued waits end now as the pool would end them,
   * those already handed to the pool end with it.
   */
  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.closed = true;
    for (let wait = this.waits.oldest, next: Wait | null; wait !== null; wait = next) {
      next = wait.newer;
      if (wait.queued) this.end(wait, databaseUnavailable());
    }
  }

  /** Connections lent or being opened (mysql2 moves them between its queues synchronously). */
  private inUse(): number {
    return this.queues.all.length - this.queues.free.length;
  }

  private clientOf(address: string): Client {
    let client = this.clients.get(address);
    if (client === undefined) {
      if (this.clients.size >= this.forgetAt) this.forgetIdle();
      client = { address, held: 0, first: null, last: null, level: -1, before: null, after: null };
      this.clients.set(address, client);
    }
    return client;
  }

  /** Drops every record that holds and waits for nothing, in one batch. */
  private forgetIdle(): void {
    for (const [address, client] of this.clients) {
      if (client.held === 0 && client.first === null) this.clients.delete(address);
    }
    this.forgetAt = Math.max(IDLE_CLIENTS_KEPT, 2 * this.clients.size);
  }

  /** Asks the pool for a connection for `wait`, which it holds from now on. */
  private ask(wait: Wait): void {
    const client = wait.client;
    client.held++;
    this.place(client);
    this.pool.getConnection((error, connection) => {
      if (error || connection === undefined) {
        this.unhold(client);
        this.end(wait, mapDbError(error));
        if (this.queued > 0) this.serve();
        return;
      }
      (connection as Loaned)[HOLDER] = client;
      // A wait given up meanwhile (the sweep ended it) hands the late connection on.
      if (this.waits.take(wait)) wait.done(null, connection);
      else this.giveBack(connection);
    });
  }

  /** While the pool has room and requests wait: the next in turn gets a connection. */
  private serve(): void {
    while (this.queued > 0 && (this.closed || this.inUse() < this.size)) {
      const wait = this.next();
      if (wait === null) return;
      this.dequeue(wait);
      this.ask(wait);
    }
  }

  /**
   * The first queued wait of the lowest line's client whose first wait is the lightest (among
   * the first LINE_LOOKAHEAD of the line; first come first among equals).
   */
  private next(): Wait | null {
    for (let level = 0; level <= this.size; level++) {
      const head = this.lines[level] ?? null;
      if (head === null) continue;
      let best = head;
      let client = head.after;
      for (let seen = 1; seen < LINE_LOOKAHEAD && client !== null; seen++, client = client.after) {
        if ((client.first?.rows ?? 0) < (best.first?.rows ?? 0)) best = client;
      }
      return best.first;
    }
    return null;
  }

  /** Into its client's queue, behind every wait no heavier than it (equals keep their order). */
  private enqueue(wait: Wait): void {
    const client = wait.client;
    wait.queued = true;
    let ahead = client.last;
    while (ahead !== null && ahead.rows > wait.rows) ahead = ahead.ahead;
    wait.ahead = ahead;
    wait.behind = ahead === null ? client.first : ahead.behind;
    if (wait.behind) wait.behind.ahead = wait;
    else client.last = wait;
    if (ahead) ahead.behind = wait;
    else client.first = wait;
    this.queued++;
    if (client.level === -1) this.place(client);
  }

  private dequeue(wait: Wait): void {
    const client = wait.client;
    if (wait.ahead) wait.ahead.behind = wait.behind;
    else client.first = wait.behind;
    if (wait.behind) wait.behind.ahead = wait.ahead;
    else client.last = wait.ahead;
    wait.queued = false;
    wait.ahead = null;
    wait.behind = null;
    this.queued--;
    if (client.first === null) this.leaveLine(client);
  }

  private unhold(client: Client): void {
    client.held--;
    this.place(client);
  }

  /**
   * Puts a client with queued waits at the end of the line its holdings say (a client whose
   * holdings changed waits behind those that already hold as many); one without, in no line.
   */
  private place(client: Client): void {
    this.leaveLine(client);
    if (client.first === null) return;
    const level = Math.min(Math.max(client.held, 0), this.size);
    client.level = level;
    client.before = this.ends[level] ?? null;
    if (client.before) client.before.after = client;
    else this.lines[level] = client;
    this.ends[level] = client;
  }

  private leaveLine(client: Client): void {
    const level = client.level;
    if (level === -1) return;
    if (client.before) client.before.after = client.after;
    else this.lines[level] = client.after;
    if (client.after) client.after.before = client.before;
    else this.ends[level] = client.before;
    client.level = -1;
    client.before = null;
    client.after = null;
  }

  /** Ends a wait that is still in progress: out of every list, `done` told. */
  private end(wait: Wait, error: unknown): void {
    if (!this.waits.take(wait)) return;
    if (wait.queued) this.dequeue(wait);
    wait.done(error);
  }

  private sweep(): void {
    if (this.waits.oldest === null) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
      return;
    }
    const now = Date.now();
    for (let wait: Wait | null = this.waits.oldest, next: Wait | null; wait !== null; wait = next) {
      // Read before `wait` may leave the list.
      next = wait.newer;
      const waited = now - wait.since;
      if (waited >= this.bound.maxWaitMs) {
        this.end(wait, databaseBusy());
      } else if (waited >= ALIVE_CHECK_MS && !wait.asked) {
        wait.asked = true;
        this.bound.isAlive().then(
          (alive) => {
            if (!alive) this.end(wait, databaseUnavailable());
          },
          () => this.end(wait, databaseUnavailable()),
        );
      }
    }
    // Room the pool made without a connection given back here (a broken one it dropped).
    if (this.queued > 0) this.serve();
    this.reclaimSoon();
  }

  /**
   * reclaim, once the I/O that has come in is handled: after a busy spell of the event loop,
   * timers run before the socket events that arrived meanwhile, so a client that did read on
   * (its 'drain' still queued) would be judged by a pause it did not make.
   */
  private reclaimSoon(): void {
    if (this.reclaimScheduled || this.queued <= this.takingBack || this.oldestStall === null)
      return;
    this.reclaimScheduled = true;
    setImmediate(() => {
      this.reclaimScheduled = false;
      if (this.queued > this.takingBack && this.oldestStall !== null) this.reclaim(Date.now());
    });
  }

  /**
   * Looks at the reads that have waited a sweep or more for their clients (one measure for all)
   * and takes back every one whose client has taken nothing for its patience.
   */
  private reclaim(now: number): void {
    // A look counts at most one sweep of quiet: when this process runs late, a client on the
    // same host (or one slowed with it) is judged by as many looks as when it runs on time.
    const quiet = Math.min(now - this.lookedAt, WAIT_SWEEP_MS);
    this.lookedAt = now;
    // A fast read pauses and resumes many times a second: nothing is measured until some read
    // has waited a sweep for its client; then every waiting one is, the recent ones to start from.
    const looked: Stall[] = [];
    let due = false;
    for (let stall = this.oldestStall; stall !== null; stall = stall.later) {
      looked.push(stall);
      if (now - stall.since >= WAIT_SWEEP_MS) due = true;
    }
    if (!due) return;
    const taken = this.progress(looked.map((stall) => stall.socket()));
    const stopped: Stall[] = [];
    looked.forEach((stall, i) => {
      const progress = taken[i];
      // Unknown (no kernel table, not a TCP socket): left to the stall timeout.
      if (progress === null || progress === undefined) return;
      const count = progress.taken;
      if (stall.taken < 0 || count > stall.taken || progress.caughtUp) {
        // It read on after taking nothing for a while: its own pace, granted from now on.
        if (stall.taken >= 0 && count > stall.taken) {
          stall.patience = Math.max(stall.patience, 2 * stall.quietMs);
        }
        stall.taken = count;
        stall.quietMs = 0;
        return;
      }
      stall.quietMs += quiet;
      if (stall.quietMs >= Math.max(SLOW_READER_MS, stall.patience)) stopped.push(stall);
    });
    for (const stall of stopped) {
      this.flowing(stall);
      const loaned = stall.connection as Loaned;
      if (loaned[TAKEN] === true) continue;
      loaned[TAKEN] = true;
      this.takingBack++;
      this.takenBack++;
      stall.takeBack(stall.quietMs);
    }
  }
}
