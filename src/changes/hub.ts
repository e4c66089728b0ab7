/**
 * The change feed (docs/changes.md): one binary-log reader (reader.ts) for the gateway, one
 * evaluator (decide.ts), and every subscriber of `GET /table/<t>/changes`. Transactions read
 * wait in one queue; a worker takes them a batch at a time, decides for each distinct read of
 * each table once, and hands each subscriber its events of a transaction together, in commit
 * order. The reader never waits: a subscriber that cannot keep up is closed by its own stream
 * (sse.ts), and a queue grown past its bound closes every stream (they resume by event id).
 * The last transactions stay in memory, so a subscriber that reconnects resumes from them.
 * With several hosts (`-h a,b,c`, a Galera cluster), a reader whose host goes away goes on on
 * the next host from the GTID state it had reached, and so does the decision connection.
 */
import mysql, { type ConnectionOptions } from 'mysql2';
import type { Config } from '../config.js';
import { allHosts, connectionOptions, hostLabel, sessionSetup } from '../db/pool.js';
import type { SchemaCache } from '../db/schema.js';
import type { TableInfo } from '../db/schema-types.js';
import { feedPositionGone } from '../errors.js';
import type { Database } from '../execute/database.js';
import { searchOrder } from '../execute/hosts.js';
import {
  FEED_BATCH_ROWS,
  FEED_DECISION_RETRIES,
  FEED_DECISION_RETRY_MS,
  FEED_MAX_PENDING_TRANSACTIONS,
  FEED_RECENT_ROWS,
  FEED_RECENT_TRANSACTIONS,
  FEED_RECONNECT_MS,
} from '../limits.js';
import type { Log } from '../log.js';
import type { CompiledRead } from '../pipeline/compiled-read.js';
import type { Change } from '../row-change.js';
import { type Evaluated, Evaluator, eventsOf, type ReadGroup, type ReadPair } from './decide.js';
import { comparePositions, type FeedPositions, type LogPosition } from './positions.js';
import {
  BinlogReader,
  parseGtidState,
  positionOf,
  type ReadFrom,
  sequenceOf,
  type Transaction,
} from './reader.js';

/** What a subscriber's stream (sse.ts) is to the hub. */
export interface Subscriber {
  readonly table: string;
  /** What this subscriber may see of the table, and its key columns as it may see them. */
  readonly groups: () => { read: ReadGroup; key: ReadGroup } | null;
  /**
   * A job's events for it: whole transactions, in commit order, as one SSE text (one write to
   * a socket). Returns how many of its events it took: fewer when the stream overflowed partway
   * (the transactions written before), 0 when it is closed.
   */
  send(delivery: Delivery): number;
  /** The table's columns changed: compile again against the new table. */
  reshape(table: TableInfo): void;
  /** The feed fell behind past its bound: the stream ends with `event: overflow`. */
  overflow(): void;
  /**
   * Its events could not be decided: the stream ends with `event: error` carrying `id`, the
   * place a resume (`Last-Event-ID`) goes on from.
   */
  fail(id: string, code: string, message: string): void;
  readonly closed: boolean;
  /** The gateway stops: the stream ends. */
  finish(event: null): void;
}

/**
 * The events of a job's transactions that one read and key read get: one text, made and
 * encoded once for every subscriber of that read.
 */
export interface Delivery {
  readonly text: string;
  /** `text` as UTF-8. */
  readonly bytes: Buffer;
  /** Each transaction's share of `bytes`, in order: its length and its events. */
  readonly parts: readonly { readonly bytes: number; readonly events: number }[];
  readonly events: number;
}

/** A Delivery of transactions' texts (each with its count of events), joined in order. */
function deliveryOf(frames: readonly { text: string; count: number }[]): Delivery {
  const text = frames.map((frame) => frame.text).join('');
  const parts = frames.map((frame) => ({
    bytes: Buffer.byteLength(frame.text),
    events: frame.count,
  }));
  return { text, bytes: Buffer.from(text), parts, events: parts.reduce((n, p) => n + p.events, 0) };
}

/** A decision failed, also when tried again: the stream ends; a resume gets its events. */
export const FEED_DECISION_FAILED = 'FEED_DECISION_FAILED';
/** A row image too large to decide (max_allowed_packet): the stream ends; a resume goes on after it. */
export const FEED_CHANGE_TOO_LARGE = 'FEED_CHANGE_TOO_LARGE';
/**
 * A transaction the binary-log reader cannot decode (reader.ts): the streams of its tables
 * (all, when they are unknown) end; a resume goes on after it.
 */
export const FEED_CHANGE_UNDECODABLE = 'FEED_CHANGE_UNDECODABLE';

/** A transaction sent apart from others: a TRUNCATE, a change of columns, or one not decoded. */
function apart(change: Change): boolean {
  return change.op === 'schema' || change.op === 'truncate' || change.op === 'undecodable';
}

/**
 * Told of every transaction the binary-log reader reads, as it is read (before any decision,
 * whatever the subscribers), and of the connection going and coming back: the answer cache
 * (cache/feed-drops.ts).
 */
export interface FeedWatcher {
  transaction(transaction: Transaction): void;
  connection(connected: boolean): void;
}

/** Why the feed is off on a server that keeps no binary log. */
export const LOG_BIN_OFF = 'log_bin is OFF';

/** Whether the feed serves, and why not. */
export type FeedStatus = { readonly on: true } | { readonly on: false; readonly reason: string };

interface Job {
  readonly transactions: readonly Transaction[];
  /** A resuming subscriber's own replay; null: the live stream, to every live subscriber. */
  readonly only: Subscriber | null;
  /** Replay: the first transaction's events up to this index were sent before. */
  readonly skip: { readonly transaction: Transaction; readonly index: number } | null;
}

/** What the feed reads with, when it is on. */
interface Source {
  /** Each host of `-h`, in order: its name in positions and its connection. */
  readonly hosts: readonly { readonly label: string; readonly connection: ConnectionOptions }[];
  readonly database: string;
  /** The replica id the feed's reader announces (catch-ups take others near it). */
  readonly serverId: number;
  /** The decision connection's session setup. */
  readonly setup: string;
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, as a read gives a DATETIME (docs/reading.md). */
export function commitTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** Whether a transaction is the one a position names (by GTID: also on another server). */
function sameTransaction(transaction: Transaction, position: LogPosition): boolean {
  if (transaction.gtid !== '' && position.gtid !== '') return transaction.gtid === position.gtid;
  return (
    transaction.server === position.server &&
    transaction.file === position.file &&
    transaction.end === position.end
  );
}

/** The events after `since` of transactions from its own on: the replay's skip. */
function skipOf(transactions: readonly Transaction[], since: LogPosition): Job['skip'] {
  const first = transactions[0];
  return first !== undefined && sameTransaction(first, since)
    ? { transaction: first, index: since.index }
    : null;
}

/** Whether state `a` has read everything state `b` has (each of `b`'s domains as far). */
function covers(a: Map<string, string>, b: Map<string, string>): boolean {
  for (const [domain, gtid] of b) {
    const have = a.get(domain);
    if (have === undefined || sequenceOf(have) < sequenceOf(gtid)) return false;
  }
  return true;
}

/** Whether a GTID is within a state: at or before its domain's last GTID. */
function inState(gtid: string, state: Map<string, string>): boolean {
  const last = state.get(gtid.slice(0, gtid.indexOf('-')));
  return last !== undefined && sequenceOf(gtid) <= sequenceOf(last);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export class ChangeFeed {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  /** Subscribers being caught up from the binary log: not yet given live events. */
  private readonly pending = new Set<Subscriber>();
  private readonly queue: Transaction[] = [];
  private readonly replays: Job[] = [];
  private readonly recent: Transaction[] = [];
  private recentRows = 0;
  /** Every transaction after this place (of that server's log) is in `recent` (or queued). */
  private recentFrom: { server: string; file: string; end: number };
  private working = false;
  private stopped = false;
  private reconnecting = false;
  /** Which host of `source.hosts` the reader and the decision connection are on. */
  private hostIndex = 0;
  /** Events handed to subscribers, for metrics. */
  eventsSent = 0;
  /** Decisions that failed (each try), for metrics. */
  decisionFailures = 0;
  /** Streams ended because their events could not be decided, for metrics. */
  streamsFailed = 0;
  /** From the commit of the last live transaction handled to when it was (ms), for metrics. */
  private handledLagMs = 0;
  /** Whether the binary-log connection streams now (false while it is reopened). */
  connected = false;
  private readonly watchers: FeedWatcher[] = [];

  private constructor(
    readonly status: FeedStatus,
    private reader: BinlogReader | null,
    private evaluator: Evaluator | null,
    private readonly schema: SchemaCache,
    readonly positions: FeedPositions,
    private readonly log: Log,
    private readonly source: Source | null,
    /** Transactions kept in `recent` at most. */
    private readonly memoryTransactions = FEED_RECENT_TRANSACTIONS,
  ) {
    const from = reader?.position ?? { file: '', position: 0 };
    this.recentFrom = { server: reader?.server ?? '', file: from.file, end: from.position };
    if (reader !== null) reader.onTransaction = (t) => this.read(t);
  }

  /** A feed that is off, for the reason given (the route answers 503 with it). */
  static off(reason: string, schema: SchemaCache, positions: FeedPositions, log: Log): ChangeFeed {
    return new ChangeFeed({ on: false, reason }, null, null, schema, positions, log, null);
  }

  /**
   * Starts the feed when the server allows it: the binary log on, in ROW format with FULL
   * images, and a user that may read it. Otherwise a feed that is off, saying why. With
   * several hosts, on the first that answers.
   */
  static async open(
    config: Config,
    db: Database,
    schema: SchemaCache,
    positions: FeedPositions,
    log: Log,
  ): Promise<ChangeFeed> {
    const mode = config.changeFeed ?? 'auto';
    if (mode === 'off')
      return ChangeFeed.off('it is turned off (--change-feed off)', schema, positions, log);
    const base = connectionOptions(config.db);
    const source: Source = {
      hosts: allHosts(config.db).map((host) => ({
        label: hostLabel(host),
        connection: { ...base, host: host.host, port: host.port },
      })),
      database: config.db.database,
      // Replicas of one server need ids of their own; one of the upper half is unlikely to be
      // a real replica's.
      serverId: 0x40000000 + Math.floor(Math.random() * 0x3fffffff),
      setup: sessionSetup({ flavour: db.flavour, cluster: 'single' }, config.queryTimeoutMs),
    };
    let evaluator: Evaluator | null = null;
    let hostIndex = 0;
    try {
      for (const [index, host] of source.hosts.entries()) {
        try {
          evaluator = await Evaluator.open(host.connection, source.setup);
          hostIndex = index;
          break;
        } catch (error) {
          if (index === source.hosts.length - 1) throw error;
        }
      }
      if (evaluator === null) throw new Error('no host answered');
      const [[settings]] = (await evaluator.ask(
        'SELECT @@log_bin, @@binlog_format, @@binlog_row_image',
      )) as [unknown[][]];
      const [logBin, format, image] = settings as [unknown, unknown, unknown];
      const reason =
        Number(logBin) !== 1
          ? LOG_BIN_OFF
          : String(format).toUpperCase() !== 'ROW'
            ? `binlog_format is ${String(format)}`
            : String(image).toUpperCase() !== 'FULL'
              ? `binlog_row_image is ${String(image)}`
              : null;
      if (reason !== null) {
        await evaluator.close();
        return ChangeFeed.off(reason, schema, positions, log);
      }
      const undecodable = db.flavour === 'mysql' ? await undecodableEvents(evaluator) : null;
      if (undecodable !== null) {
        await evaluator.close();
        return ChangeFeed.off(undecodable, schema, positions, log);
      }
      let status: unknown[] | undefined;
      try {
        status = await logStatus(evaluator);
      } catch (error) {
        await evaluator.close();
        const { code } = error as { code?: string };
        return ChangeFeed.off(
          code === 'ER_SPECIFIC_ACCESS_DENIED_ERROR' || code === 'ER_ACCESS_DENIED_ERROR'
            ? `user ${config.db.user} may not read the binary log (MariaDB: GRANT BINLOG MONITOR, REPLICATION SLAVE; MySQL: GRANT REPLICATION CLIENT, REPLICATION SLAVE)`
            : `the server does not show its binary log position: ${(error as Error).message}`,
          schema,
          positions,
          log,
        );
      }
      if (status === undefined) {
        await evaluator.close();
        return ChangeFeed.off('the server shows no binary log position', schema, positions, log);
      }
      const file = String(status[0]);
      const position = Number(status[1]);
      const from: ReadFrom = {
        file,
        position,
        gtids: db.flavour === 'mariadb' ? await gtidStateAt(evaluator, file, position) : '',
      };
      const host = source.hosts[hostIndex] as Source['hosts'][number];
      const reader = new BinlogReader(
        {
          connection: host.connection,
          database: source.database,
          serverId: source.serverId,
          server: host.label,
          from,
        },
        () => {},
        () => {},
      );
      const feed = new ChangeFeed(
        { on: true },
        reader,
        evaluator,
        schema,
        positions,
        log,
        source,
        config.feedMemoryTransactions ?? FEED_RECENT_TRANSACTIONS,
      );
      feed.hostIndex = hostIndex;
      try {
        await feed.startReader(reader);
      } catch (error) {
        await evaluator.close();
        return ChangeFeed.off(
          `cannot read the binary log: ${(error as Error).message} (the user needs REPLICATION SLAVE)`,
          schema,
          positions,
          log,
        );
      }
      return feed;
    } catch (error) {
      await evaluator?.close();
      return ChangeFeed.off(
        `cannot check the binary log: ${(error as Error).message}`,
        schema,
        positions,
        log,
      );
    }
  }

  private async startReader(reader: BinlogReader): Promise<void> {
    // A reader left behind (the feed moved on to another) has nothing more to say.
    reader.onError = (error) => {
      if (reader === this.reader) this.lost(error);
    };
    await reader.start();
    this.connected = true;
    for (const watcher of this.watchers) watcher.connection(true);
  }

  /** Adds a watcher of every transaction read and of the connection (FeedWatcher). */
  watch(watcher: FeedWatcher): void {
    this.watchers.push(watcher);
  }

  /**
   * Seconds the feed is behind the binary log, for metrics: from a transaction's commit to
   * when its events went to the subscribers, for the last one handled; while transactions wait
   * to be decided, at least the age of the oldest of them. Commit times are whole seconds.
   */
  get lagSeconds(): number {
    const waiting = this.queue[0];
    const behind = waiting === undefined ? 0 : Date.now() - waiting.at;
    return Math.max(0, this.handledLagMs, behind) / 1000;
  }

  /** The replication connection broke: read on from where it was, on this host or the next. */
  private lost(error: Error): void {
    if (this.stopped || this.reader === null || this.reconnecting) return;
    this.log.warn(
      { reason: error.message, host: this.reader.server },
      'change feed: the binary log connection broke; reconnecting',
    );
    this.reader.stop();
    this.connected = false;
    for (const watcher of this.watchers) watcher.connection(false);
    this.reconnecting = true;
    this.reconnect().finally(() => {
      this.reconnecting = false;
    });
  }

  /**
   * The host in use first, then the others in turn, each from the GTID state reached, as its
   * own log places it: by GTID also on the same host, which behind a proxy may be another node.
   * Without GTIDs (MySQL), the same host only, at the same file and offset. Round after round
   * until one answers or the feed stops.
   */
  private async reconnect(): Promise<void> {
    const source = this.source as Source;
    for (;;) {
      await sleep(FEED_RECONNECT_MS);
      if (this.stopped || this.reader === null) return;
      const order = [this.hostIndex, ...searchOrder(source.hosts.length, this.hostIndex)];
      for (const index of order) {
        if (this.stopped) return;
        try {
          const from = this.reader.position;
          if (from.gtids === '' && index === this.hostIndex) {
            // No GTIDs (MySQL): where it was in this host's log.
            this.reader.restartAt(from);
            await this.startReader(this.reader);
          } else {
            await this.moveTo(index);
          }
          return;
        } catch (error) {
          this.log.warn(
            { reason: (error as Error).message, host: source.hosts[index]?.label },
            'change feed: cannot read the binary log there',
          );
        }
      }
    }
  }

  /** Reads on on a host (another, or the same again), from the GTID state reached. */
  private async moveTo(index: number): Promise<void> {
    const source = this.source as Source;
    const host = source.hosts[index] as Source['hosts'][number];
    const from = (this.reader as BinlogReader).position;
    if (from.gtids === '') {
      throw new Error('no GTID state to go on from (failover needs MariaDB GTIDs)');
    }
    const reader = new BinlogReader(
      {
        connection: host.connection,
        database: source.database,
        serverId: source.serverId,
        server: host.label,
        from: { file: '', position: 0, gtids: from.gtids },
      },
      (t) => this.read(t),
      () => {},
    );
    await this.startReader(reader);
    this.reader = reader;
    const moved = index !== this.hostIndex;
    this.hostIndex = index;
    this.log.warn(
      { host: host.label, gtids: from.gtids },
      'change feed: reading the binary log again from its GTID state',
    );
    // The decisions move too: the old host's connection is gone or going.
    if (moved) await this.reopenEvaluator(this.evaluator);
  }

  /**
   * A decision connection on the reader's host (else any that answers) in place of `failed`;
   * nothing when it was replaced already. Callers at once share one opening.
   */
  private reopenEvaluator(failed: Evaluator | null): Promise<void> {
    if (this.evaluator !== failed) return Promise.resolve();
    if (this.reopening === null) {
      this.reopening = this.openEvaluator(failed).finally(() => {
        this.reopening = null;
      });
    }
    return this.reopening;
  }

  private reopening: Promise<void> | null = null;

  private async openEvaluator(failed: Evaluator | null): Promise<void> {
    const source = this.source as Source;
    for (;;) {
      for (const index of [this.hostIndex, ...searchOrder(source.hosts.length, this.hostIndex)]) {
        if (this.stopped) return;
        try {
          const host = source.hosts[index] as Source['hosts'][number];
          this.evaluator = await Evaluator.open(host.connection, source.setup);
          await failed?.close();
          return;
        } catch {
          // The next host, then the next round.
        }
      }
      await sleep(FEED_RECONNECT_MS);
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.connected = false;
    for (const watcher of this.watchers) watcher.connection(false);
    for (const set of this.subscribers.values()) for (const s of set) s.finish(null);
    this.subscribers.clear();
    this.reader?.stop();
    await this.evaluator?.close();
  }

  /** Subscribers now, for metrics. */
  get subscriberCount(): number {
    let count = 0;
    for (const set of this.subscribers.values()) count += set.size;
    return count;
  }

  /** The index in `recent` of the transaction of `since`, or -1. */
  private locate(since: LogPosition): number {
    for (let i = this.recent.length - 1; i >= 0; i--) {
      if (sameTransaction(this.recent[i] as Transaction, since)) return i;
    }
    return -1;
  }

  /**
   * Adds a subscriber; with `since`, first the events after that place: from memory when it
   * holds the transaction; else read again from the binary log: by GTID on MariaDB (whichever
   * server of the cluster the reader is on now), by file and offset on MySQL.
   */
  async subscribe(subscriber: Subscriber, since: LogPosition | null): Promise<void> {
    if (since === null) {
      this.add(subscriber);
      return;
    }
    const at = this.locate(since);
    if (at < 0 && since.before !== '') {
      await this.catchUpByGtid(subscriber, since);
      return;
    }
    if (at < 0 && this.before(since)) {
      await this.catchUp(subscriber, since);
      return;
    }
    this.add(subscriber);
    // Not in memory and not before it: a position another gateway gave that this one has not
    // read yet; what memory holds after it, if anything.
    const replay =
      at >= 0
        ? this.recent.slice(at)
        : this.recent.filter(
            (t) =>
              t.server === since.server &&
              comparePositions(positionOf(t, Number.MAX_SAFE_INTEGER), since) > 0,
          );
    this.replay(subscriber, replay, since);
    this.work();
  }

  /**
   * Queues a subscriber's replay: runs of row changes as one job each, a TRUNCATE or a change
   * of columns as a job of its own (run() sends it as such and reshapes the stream), so a
   * resume across an ALTER TABLE gets its `schema` event and the rows after it in the new
   * shape. The event `since` names itself is not sent again.
   */
  private replay(subscriber: Subscriber, transactions: readonly Transaction[], since: LogPosition) {
    let run: Transaction[] = [];
    const flush = () => {
      if (run.length > 0) {
        this.replays.push({ transactions: run, only: subscriber, skip: skipOf(run, since) });
      }
      run = [];
    };
    for (const transaction of transactions) {
      if (!transaction.changes.some(apart)) {
        run.push(transaction);
        continue;
      }
      flush();
      if (!sameTransaction(transaction, since)) {
        this.replays.push({ transactions: [transaction], only: subscriber, skip: null });
      }
    }
    flush();
  }

  /**
   * The place after every transaction the feed has handed on: a subscriber added now with it
   * as `since` gets every later change and none before (a webhook's first start).
   */
  head(): LogPosition {
    const last = this.recent[this.recent.length - 1];
    if (last !== undefined) return positionOf(last, Number.MAX_SAFE_INTEGER);
    // Nothing read yet: where the reader goes on, with its GTID state, so that a gateway on
    // another host of the cluster (or through another address) finds the place too.
    const reader = this.reader;
    if (reader !== null && this.queue.length === 0) {
      const { file, position, gtids } = reader.position;
      const index = Number.MAX_SAFE_INTEGER;
      return {
        server: reader.server,
        file,
        start: position,
        end: position,
        index,
        gtid: '',
        before: gtids,
      };
    }
    const { server, file, end } = this.recentFrom;
    return { server, file, start: end, end, index: Number.MAX_SAFE_INTEGER, gtid: '', before: '' };
  }

  /** 410 FEED_POSITION_GONE when neither memory nor the binary log still holds `since`. */
  async check(since: LogPosition): Promise<void> {
    if (this.locate(since) >= 0) return;
    const evaluator = this.evaluator;
    if (evaluator === null) throw feedPositionGone();
    const [logs] = (await evaluator.ask('SHOW BINARY LOGS')) as [unknown[][]];
    if (since.before === '') {
      if (!this.before(since)) return;
      if (!logs.some((row) => String(row[0]) === since.file)) throw feedPositionGone();
      return;
    }
    // By GTID: the log must still hold every transaction after the state before it. Its oldest
    // file starts after the GTIDs its list names.
    const wanted = parseGtidState(since.before);
    const oldest = parseGtidState(await gtidStateAt(evaluator, String(logs[0]?.[0]), 4));
    if (!covers(wanted, oldest)) throw feedPositionGone();
  }

  unsubscribe(subscriber: Subscriber): void {
    this.subscribers.get(subscriber.table)?.delete(subscriber);
    this.pending.delete(subscriber);
  }

  private add(subscriber: Subscriber): void {
    let set = this.subscribers.get(subscriber.table);
    if (set === undefined) {
      set = new Set();
      this.subscribers.set(subscriber.table, set);
    }
    set.add(subscriber);
  }

  /** Whether the transaction ending at `since` is older than what `recent` holds (one server). */
  private before(since: LogPosition): boolean {
    return (
      since.server === this.recentFrom.server &&
      comparePositions({ ...since, index: 0 }, { ...this.recentFrom, index: 0 }) < 0
    );
  }

  /** A reader of its own for a catch-up, on the host in use. */
  private catchUpReader(from: ReadFrom, onError: (error: Error) => void): BinlogReader {
    const source = this.source as Source;
    const host = source.hosts[this.hostIndex] as Source['hosts'][number];
    return new BinlogReader(
      {
        connection: host.connection,
        database: source.database,
        serverId: source.serverId + 1 + Math.floor(Math.random() * 1000),
        server: host.label,
        from,
      },
      () => {},
      onError,
    );
  }

  /** Hands a caught-up subscriber its replay, then the live stream. */
  private handOver(subscriber: Subscriber, replay: Transaction[], since: LogPosition): void {
    this.pending.delete(subscriber);
    if (!subscriber.closed) this.replay(subscriber, replay, since);
    this.work();
  }

  /**
   * Reads the log again from `since` on its own connection until it reaches the place `recent`
   * starts from, then hands the subscriber over to the live stream. The hand-over is decided
   * on the event that reaches that place, before anything else runs, so memory cannot move on
   * between the two and leave a gap. 410 when the log no longer has the file.
   */
  private async catchUp(subscriber: Subscriber, since: LogPosition): Promise<void> {
    if (this.evaluator === null || this.source === null) throw feedPositionGone();
    const [logs] = (await this.evaluator.ask('SHOW BINARY LOGS')) as [unknown[][]];
    const files = logs.map((row) => String(row[0]));
    if (!files.includes(since.file)) throw feedPositionGone();
    this.pending.add(subscriber);
    this.add(subscriber);
    const caught: Transaction[] = [];
    await new Promise<void>((resolve, reject) => {
      let done = false;
      const reader = this.catchUpReader(
        { file: since.file, position: since.start, gtids: since.before },
        (error) => {
          if (done) return;
          done = true;
          reader.stop();
          this.pending.delete(subscriber);
          reject(error);
        },
      );
      reader.onTransaction = (transaction) => {
        if (!done) caught.push(transaction);
      };
      const reached = (): boolean => {
        const at = reader.position;
        const from = { ...this.recentFrom, index: 0 };
        return comparePositions({ file: at.file, end: at.position, index: 0 }, from) >= 0;
      };
      const finish = () => {
        if (done) return;
        done = true;
        reader.stop();
        const from = { ...this.recentFrom, index: 0 };
        this.handOver(
          subscriber,
          [
            ...caught.filter(
              (t) =>
                comparePositions(positionOf(t, Number.MAX_SAFE_INTEGER), since) > 0 &&
                comparePositions(positionOf(t, 0), from) <= 0,
            ),
            ...this.recent,
          ],
          since,
        );
        resolve();
      };
      reader.onProgress = () => {
        if (!done && (reached() || subscriber.closed)) finish();
      };
      reader.start().then(() => {
        // Nothing to read up to the place `recent` starts from: caught up already.
        if (!done && reached()) finish();
      }, reader.onError);
    });
  }

  /**
   * Reads the log again by GTID from the state before `since`'s transaction, on the host in
   * use (GTIDs are the cluster's: the same on every node), until what it has read reaches the
   * state memory starts after (the state before the first transaction memory or the queue
   * holds; with neither, what the reader has read). Decided on the event that reaches it, so
   * memory cannot move on in between; what memory holds is not taken twice.
   */
  private async catchUpByGtid(subscriber: Subscriber, since: LogPosition): Promise<void> {
    if (this.evaluator === null || this.source === null || this.reader === null) {
      throw feedPositionGone();
    }
    this.pending.add(subscriber);
    this.add(subscriber);
    const caught: Transaction[] = [];
    await new Promise<void>((resolve, reject) => {
      let done = false;
      const reader = this.catchUpReader({ file: '', position: 0, gtids: since.before }, (error) => {
        if (done) return;
        done = true;
        reader.stop();
        this.pending.delete(subscriber);
        reject(error);
      });
      reader.onTransaction = (transaction) => {
        if (!done) caught.push(transaction);
      };
      reader.onProgress = () => {
        if (done) return;
        if (subscriber.closed) {
          done = true;
          reader.stop();
          this.pending.delete(subscriber);
          resolve();
          return;
        }
        const held = this.recent[0] ?? this.queue[0];
        const memoryFrom = parseGtidState(held?.before ?? this.reader?.position.gtids ?? '');
        if (!covers(parseGtidState(reader.position.gtids), memoryFrom)) return;
        done = true;
        reader.stop();
        // Up to memoryFrom from the log, after it from memory; nothing from before `since`.
        const older = caught.filter((t) => inState(t.gtid, memoryFrom));
        const sinceFrom = parseGtidState(since.before);
        const replay = [...older, ...this.recent].filter((t) => !inState(t.gtid, sinceFrom));
        this.handOver(subscriber, replay, since);
        resolve();
      };
      reader.start().catch(reader.onError);
    });
  }

  /** A transaction read: queued for the worker, never waited for. */
  private read(transaction: Transaction): void {
    for (const watcher of this.watchers) watcher.transaction(transaction);
    if (this.queue.length >= FEED_MAX_PENDING_TRANSACTIONS) {
      // Too far behind to catch up in memory: every stream ends, and resumes from the log.
      this.log.warn(
        'change feed: decisions fell too far behind the binary log; closing every stream',
      );
      for (const set of this.subscribers.values()) for (const s of set) s.overflow();
      this.subscribers.clear();
      this.queue.length = 0;
      this.recent.length = 0;
      this.recentRows = 0;
      this.recentFrom = {
        server: transaction.server,
        file: transaction.file,
        end: transaction.end,
      };
      return;
    }
    this.queue.push(transaction);
    this.work();
  }

  private work(): void {
    if (this.working || this.stopped) return;
    this.working = true;
    this.drain()
      .catch((error: unknown) => {
        this.log.error({ reason: (error as Error).message }, 'change feed: a decision failed');
      })
      .finally(() => {
        this.working = false;
        if ((this.queue.length > 0 || this.replays.length > 0) && !this.stopped) this.work();
      });
  }

  private async drain(): Promise<void> {
    for (;;) {
      const replay = this.replays.shift();
      if (replay !== undefined) {
        await this.decide(replay);
        continue;
      }
      if (this.queue.length === 0) return;
      // A batch: transactions up to a bound of rows; a change of columns ends it.
      const batch: Transaction[] = [];
      let rows = 0;
      while (this.queue.length > 0 && rows < FEED_BATCH_ROWS) {
        const next = this.queue[0] as Transaction;
        const ddl = next.changes.some(apart);
        if (ddl && batch.length > 0) break;
        this.queue.shift();
        batch.push(next);
        rows += next.changes.length;
        if (ddl) break;
      }
      for (const transaction of batch) this.remember(transaction);
      await this.decide({ transactions: batch, only: null, skip: null });
      const last = batch[batch.length - 1];
      if (last !== undefined) this.handledLagMs = Date.now() - last.at;
    }
  }

  private remember(transaction: Transaction): void {
    this.recent.push(transaction);
    this.recentRows += transaction.changes.length;
    while (
      this.recent.length > this.memoryTransactions ||
      (this.recentRows > FEED_RECENT_ROWS && this.recent.length > 1)
    ) {
      const old = this.recent.shift() as Transaction;
      this.recentRows -= old.changes.length;
      this.recentFrom = { server: old.server, file: old.file, end: old.end };
    }
  }

  /**
   * Runs a job, and again when it fails: when the decision connection broke (its host went
   * away, a KILL), on a new one, so a failover loses no transaction; each try after a pause
   * twice as long as the one before, FEED_DECISION_RETRIES times at most. A job sends its
   * events only once all of it is decided, so a try again sends nothing twice. When it still
   * fails, the streams it concerned end with `event: error` and the place before it: a resume
   * gets its transactions again. Nothing is skipped silently.
   */
  private async decide(job: Job): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const evaluator = this.evaluator;
      try {
        await this.run(job);
        return;
      } catch (error) {
        if (this.stopped) return;
        this.decisionFailures++;
        const reason = (error as Error).message;
        const answers = await evaluator?.ask('SELECT 1').then(
          () => true,
          () => false,
        );
        if (answers === false) await this.reopenEvaluator(evaluator);
        if (attempt >= FEED_DECISION_RETRIES) {
          this.abandon(job, reason);
          return;
        }
        this.log.warn(
          { code: FEED_DECISION_FAILED, reason, attempt: attempt + 1 },
          'change feed: a decision failed; trying it again',
        );
        await sleep(FEED_DECISION_RETRY_MS * 2 ** attempt);
        if (this.stopped) return;
      }
    }
  }

  /** The subscribers a job is for now: its own, or every live one of its tables. */
  private audience(job: Job): Subscriber[] {
    if (job.only !== null) return job.only.closed ? [] : [job.only];
    const tables = new Set<string>();
    for (const t of job.transactions) {
      for (const c of t.changes) if (c.table !== null) tables.add(c.table);
    }
    const all: Subscriber[] = [];
    for (const table of tables) {
      for (const s of this.subscribers.get(table) ?? []) {
        if (!this.pending.has(s) && !s.closed) all.push(s);
      }
    }
    return all;
  }

  /** A job that could not be decided: its streams end at the place before it, to resume. */
  private abandon(job: Job, reason: string): void {
    const first = job.transactions[0];
    if (first === undefined) return;
    const audience = this.audience(job);
    const place =
      job.skip !== null ? positionOf(job.skip.transaction, job.skip.index) : positionOf(first, -1);
    this.log.error(
      {
        code: FEED_DECISION_FAILED,
        reason,
        tx: transactionId(first),
        transactions: job.transactions.length,
        streams: audience.length,
      },
      'change feed: a decision failed after every try; its streams end, to resume from before it',
    );
    this.failStreams(
      audience,
      this.positions.seal(place),
      FEED_DECISION_FAILED,
      'The changes could not be decided (the database refused): reconnect with Last-Event-ID to get them again',
    );
  }

  private failStreams(
    subscribers: readonly Subscriber[],
    id: string,
    code: string,
    message: string,
  ): void {
    for (const subscriber of subscribers) {
      if (subscriber.closed) continue;
      this.unsubscribe(subscriber);
      subscriber.fail(id, code, message);
      this.streamsFailed++;
    }
  }

  /** Decides a job's transactions for its subscribers and sends each its events. */
  private async run(job: Job): Promise<void> {
    const evaluator = this.evaluator;
    if (evaluator === null) return;
    const only = job.transactions.length === 1 ? job.transactions[0] : undefined;
    if (only?.changes.some((c) => c.op === 'undecodable')) {
      this.undecodable(job, only);
      return;
    }
    const tables = new Set<string>();
    for (const t of job.transactions) {
      for (const c of t.changes) if (c.table !== null) tables.add(c.table);
    }
    const watching = new Map<string, Subscriber[]>();
    for (const table of tables) {
      const all =
        job.only === null
          ? [...(this.subscribers.get(table) ?? [])].filter((s) => !this.pending.has(s))
          : job.only.table === table
            ? [job.only]
            : [];
      if (all.length > 0) watching.set(table, all);
    }
    if (watching.size === 0) return;
    // A change of columns is a transaction of its own (drain): the new shape first.
    const ddl = job.transactions[0]?.changes.find(
      (c): c is Structural => c.op === 'schema' || c.op === 'truncate',
    );
    if (ddl !== undefined && job.transactions.length === 1) {
      await this.structural(job.transactions[0] as Transaction, ddl, watching.get(ddl.table) ?? []);
      return;
    }
    const texts = new BatchTexts(job.transactions, this.positions);
    // Sent once every table is decided: a job tried again sends nothing twice.
    const deliveries: { delivery: Delivery; to: Subscriber[] }[] = [];
    const failures: { to: Subscriber[]; transaction: Transaction }[] = [];
    for (const [tableName, subscribers] of watching) {
      const table = await this.schema.find(tableName);
      if (table === undefined) continue;
      let changes: Change[] = [];
      let where: { transaction: number; index: number }[] = [];
      job.transactions.forEach((t, transaction) => {
        t.changes.forEach((change, index) => {
          // A resume's changes up to its place were sent before: neither decided nor sent.
          if (job.skip?.transaction === t && index <= job.skip.index) return;
          if (change.table === tableName && change.op !== 'schema' && change.op !== 'truncate') {
            changes.push(change);
            where.push({ transaction, index });
          }
        });
      });
      // A row too large to decide: the transactions before its own are sent, then the streams
      // end with an error that resumes after its transaction.
      const large = evaluator.tooLarge(table, changes);
      if (large >= 0) {
        const cut = (where[large] as { transaction: number }).transaction;
        const kept = where.findIndex((place) => place.transaction >= cut);
        changes = changes.slice(0, kept);
        where = where.slice(0, kept);
        failures.push({
          to: subscribers,
          transaction: job.transactions[cut] as Transaction,
        });
      }
      // Subscribers of one read and one key read get the same events: decided and made once,
      // sent to each.
      const alike = new Map<string, { pair: ReadPair; subscribers: Subscriber[] }>();
      for (const subscriber of subscribers) {
        const groups = subscriber.groups();
        if (groups === null || subscriber.closed) continue;
        const both = `${groups.read.key}\u0000${groups.key.key}`;
        const entry = alike.get(both);
        if (entry === undefined) {
          const pair = { key: both, read: groups.read, keys: groups.key };
          alike.set(both, { pair, subscribers: [subscriber] });
        } else entry.subscribers.push(subscriber);
      }
      if (alike.size === 0) continue;
      if (changes.length === 0) continue;
      const pairs = [...alike.values()].map((entry) => entry.pair);
      const evaluated = await evaluator.evaluate(table, changes, pairs);
      for (const { pair, subscribers: same } of alike.values()) {
        const frames = this.framesOf(tableName, pair, job, changes, where, evaluated, texts);
        if (frames.length > 0) deliveries.push({ delivery: deliveryOf(frames), to: same });
      }
    }
    // A job's events are one write per subscriber, their text encoded once for all of its
    // read's subscribers; a stream counts its lag by the transactions its socket has not
    // taken yet (sse.ts), so a client that stopped reading still meets --feed-max-lag.
    for (const { delivery, to } of deliveries) {
      for (const subscriber of to) {
        this.eventsSent += subscriber.send(delivery);
      }
    }
    for (const { to, transaction } of failures) {
      this.log.error(
        { code: FEED_CHANGE_TOO_LARGE, tx: transactionId(transaction), streams: to.length },
        'change feed: a row change is larger than max_allowed_packet allows to decide; its streams end, to resume after its transaction',
      );
      this.failStreams(
        to,
        this.positions.seal(positionOf(transaction, Number.MAX_SAFE_INTEGER)),
        FEED_CHANGE_TOO_LARGE,
        `A row change of transaction ${transactionId(transaction)} is larger than the database's max_allowed_packet allows to decide, and was not sent: read the table again; Last-Event-ID goes on after it`,
      );
    }
  }

  /**
   * The events one read and key read get of a job's transactions: a text per transaction that
   * has any, in commit order, with how many events it holds.
   */
  private framesOf(
    tableName: string,
    pair: ReadPair,
    job: Job,
    changes: readonly Change[],
    where: readonly { transaction: number; index: number }[],
    evaluated: Evaluated,
    texts: BatchTexts,
  ): { text: string; count: number }[] {
    const decision = evaluated.matches.get(pair.key);
    const rows = decision?.rows ?? new Map<number, string>();
    const keys = decision?.keys ?? new Map<number, string>();
    const table = JSON.stringify(tableName);
    const frames: { text: string; count: number }[] = [];
    let current: { text: string; count: number } | null = null;
    let currentTransaction = -1;
    changes.forEach((change, i) => {
      const place = where[i] as { transaction: number; index: number };
      const transaction = job.transactions[place.transaction] as Transaction;
      if (job.skip?.transaction === transaction && place.index <= job.skip.index) return;
      const images = evaluated.images[i] as readonly [number, number];
      const op = change.op as 'insert' | 'update' | 'delete';
      for (const event of eventsOf(op, images, rows, keys)) {
        if (current === null || currentTransaction !== place.transaction) {
          current = { text: '', count: 0 };
          currentTransaction = place.transaction;
          frames.push(current);
        }
        const key = keys.get(event.image) ?? 'null';
        const row = event.op === 'delete' ? '' : `,"row":${rows.get(event.image)}`;
        const data = `{"op":"${event.op}","table":${table},"key":${key}${row},${texts.tail(place.transaction)}}`;
        const id = texts.id(place.transaction, event.beforeChange ? place.index - 1 : place.index);
        current.text += `id: ${id}\nevent: ${event.op}\ndata: ${data}\n\n`;
        current.count++;
      }
    });
    return frames;
  }

  /**
   * A transaction the reader could not decode (a job of its own): nothing of it is sent; the
   * streams of its tables (every stream, when its tables are unknown) end with `event: error`
   * and the place after it, to read the table again. Logged once per kind of event.
   */
  private undecodable(job: Job, transaction: Transaction): void {
    const lost = transaction.changes.filter(
      (c): c is Extract<Change, { op: 'undecodable' }> => c.op === 'undecodable',
    );
    const reason = (lost[0] as { reason: string }).reason;
    const every = lost.some((c) => c.table === null);
    const tables = new Set(lost.map((c) => c.table));
    const affected = (s: Subscriber) => !s.closed && (every || tables.has(s.table));
    const to =
      job.only !== null
        ? [job.only].filter(affected)
        : [...this.subscribers.values()]
            .flatMap((set) => [...set])
            .filter((s) => !this.pending.has(s) && affected(s));
    const tx = transactionId(transaction);
    if (!this.undecodableLogged.has(reason)) {
      this.undecodableLogged.add(reason);
      this.log.warn(
        { code: FEED_CHANGE_UNDECODABLE, reason, tx, tables: every ? null : [...tables] },
        `change feed: the binary-log reader cannot decode ${reason}; the streams of its tables end with event: error, to read them again (logged once)`,
      );
    }
    this.failStreams(
      to,
      this.positions.seal(positionOf(transaction, Number.MAX_SAFE_INTEGER)),
      FEED_CHANGE_UNDECODABLE,
      `Transaction ${tx} is ${reason}, which the gateway cannot read from the binary log: its changes were not sent; read the table again; Last-Event-ID goes on after it`,
    );
  }

  /** Kinds of undecodable transactions logged already. */
  private readonly undecodableLogged = new Set<string>();

  /** TRUNCATE, or a change of columns: the new shape read, then one event to each subscriber. */
  private async structural(
    transaction: Transaction,
    change: Structural,
    subscribers: readonly Subscriber[],
  ): Promise<void> {
    const op = change.op;
    if (op === 'schema') {
      this.evaluator?.forget(change.table);
      await this.schema.refresh();
      const table = await this.schema.find(change.table);
      for (const subscriber of subscribers) if (table !== undefined) subscriber.reshape(table);
    }
    const data = `{"op":"${op}","table":${JSON.stringify(change.table)},"at":"${commitTime(transaction.at)}","tx":${JSON.stringify(transactionId(transaction))}}`;
    const text = `id: ${this.positions.seal(positionOf(transaction, 0))}\nevent: ${op}\ndata: ${data}\n\n`;
    const delivery = deliveryOf([{ text, count: 1 }]);
    for (const subscriber of subscribers) {
      this.eventsSent += subscriber.send(delivery);
    }
  }
}

/** A TRUNCATE or a change of columns. */
type Structural = Extract<Change, { op: 'truncate' | 'schema' }>;

/**
 * What every subscriber's events of one batch share, made once per batch rather than once per
 * subscriber: each event's sealed id (an HMAC), and each transaction's `"at"` and `"tx"`.
 */
class BatchTexts {
  private readonly ids = new Map<number, string>();
  private readonly tails: string[] = [];

  constructor(
    private readonly transactions: readonly Transaction[],
    private readonly positions: FeedPositions,
  ) {}

  /** The sealed id of change `index` of transaction `t` of the batch (-1: just before it). */
  id(t: number, index: number): string {
    // A transaction's changes are bounded by memory far below 2^20.
    const slot = t * 1_048_576 + index + 1;
    let id = this.ids.get(slot);
    if (id === undefined) {
      id = this.positions.seal(positionOf(this.transactions[t] as Transaction, index));
      this.ids.set(slot, id);
    }
    return id;
  }

  /** `"at":…,"tx":…` of transaction `t`. */
  tail(t: number): string {
    let tail = this.tails[t];
    if (tail === undefined) {
      const transaction = this.transactions[t] as Transaction;
      tail = `"at":"${commitTime(transaction.at)}","tx":${JSON.stringify(transactionId(transaction))}`;
      this.tails[t] = tail;
    }
    return tail;
  }
}

/** The transaction's id: its GTID, else its place in the log. */
function transactionId(transaction: Transaction): string {
  return transaction.gtid !== '' ? transaction.gtid : `${transaction.file}:${transaction.start}`;
}

export type { CompiledRead };

/** The GTID state at a place of the server's log (MariaDB's BINLOG_GTID_POS); '' if none. */
/**
 * The binary log's current place: `SHOW BINARY LOG STATUS` (MySQL 8.2+; 8.4 removed the old
 * name), else `SHOW MASTER STATUS` (MariaDB, MySQL 8.0 and 8.1).
 */
async function logStatus(evaluator: Evaluator): Promise<unknown[] | undefined> {
  try {
    const [[status]] = (await evaluator.ask('SHOW BINARY LOG STATUS')) as [unknown[][]];
    return status;
  } catch (error) {
    if ((error as { code?: string }).code !== 'ER_PARSE_ERROR') throw error;
    const [[status]] = (await evaluator.ask('SHOW MASTER STATUS')) as [unknown[][]];
    return status;
  }
}

/**
 * MySQL settings whose events the binary-log library cannot decode (README.md, "Change feed:
 * the binary-log library"): the feed is off with the reason rather than stuck on the first
 * such event. Session-level settings cannot be seen from here; docs/changes.md says so.
 */
async function undecodableEvents(evaluator: Evaluator): Promise<string | null> {
  let row: unknown[] | undefined;
  try {
    [[row]] = (await evaluator.ask(
      'SELECT @@GLOBAL.binlog_transaction_compression, @@GLOBAL.binlog_row_value_options',
    )) as [unknown[][]];
  } catch {
    // A MySQL before 8.0.20 has no compressed transactions to read.
    return null;
  }
  const [compression, options] = row ?? [];
  if (Number(compression) === 1) {
    return 'binlog_transaction_compression is ON (the binary-log reader cannot decode compressed transactions)';
  }
  if (String(options ?? '').includes('PARTIAL_JSON')) {
    return 'binlog_row_value_options is PARTIAL_JSON (the binary-log reader cannot decode partial JSON updates)';
  }
  return null;
}

async function gtidStateAt(evaluator: Evaluator, file: string, position: number): Promise<string> {
  try {
    const [[row]] = (await evaluator.ask(
      `SELECT BINLOG_GTID_POS(${mysql.escape(file)}, ${Number(position)})`,
    )) as [unknown[][]];
    return String(row?.[0] ?? '');
  } catch {
    return '';
  }
}
