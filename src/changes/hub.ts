/**
 * The change feed (docs/changes.md): one binary-log reader (reader.ts) for the gateway, one
 * evaluator (decide.ts), and every subscriber of `GET /table/<t>/changes`. Transactions read
 * wait in one queue; a worker takes them a batch at a time, decides for each distinct read of
 * each table once, and hands each subscriber its events of a transaction together, in commit
 * order. The reader never waits: a subscriber that cannot keep up is closed by its own stream
 * (sse.ts), and a queue grown past its bound closes every stream (they resume by event id).
 * The last transactions stay in memory, so a subscriber that reconnects resumes from them.
 */
import type { ConnectionOptions } from 'mysql2';
import type { Config } from '../config.js';
import { connectionOptions, sessionSetup } from '../db/pool.js';
import type { SchemaCache } from '../db/schema.js';
import type { TableInfo } from '../db/schema-types.js';
import { feedPositionGone } from '../errors.js';
import type { Database } from '../execute/database.js';
import {
  FEED_BATCH_ROWS,
  FEED_MAX_PENDING_TRANSACTIONS,
  FEED_RECENT_ROWS,
  FEED_RECENT_TRANSACTIONS,
} from '../limits.js';
import type { Log } from '../log.js';
import type { CompiledRead } from '../pipeline/compiled-read.js';
import { type Evaluated, Evaluator, type ReadGroup } from './decide.js';
import { comparePositions, type FeedPositions, type LogPosition } from './positions.js';
import {
  BinlogReader,
  type Change,
  positionOf,
  type ReadFrom,
  type Transaction,
} from './reader.js';

/** What a subscriber's stream (sse.ts) is to the hub. */
export interface Subscriber {
  readonly table: string;
  /** What this subscriber may see of the table, and its key columns as it may see them. */
  readonly groups: () => { read: ReadGroup; key: ReadGroup } | null;
  /** The events of one transaction, as SSE text; false when the stream is closed. */
  send(text: string, events: number): boolean;
  /** The table's columns changed: compile again against the new table. */
  reshape(table: TableInfo): void;
  /** The feed fell behind past its bound: the stream ends with `event: overflow`. */
  overflow(): void;
  readonly closed: boolean;
  /** The gateway stops: the stream ends. */
  finish(event: null): void;
}

/** Why the feed is off on a server that keeps no binary log. */
export const LOG_BIN_OFF = 'log_bin is OFF';

/** Whether the feed serves, and why not. */
export type FeedStatus = { readonly on: true } | { readonly on: false; readonly reason: string };

interface Job {
  readonly transactions: readonly Transaction[];
  /** A resuming subscriber's own replay; null: the live stream, to every live subscriber. */
  readonly only: Subscriber | null;
  /** Replay: where the subscriber was (events at or before it are not sent again). */
  readonly after: LogPosition | null;
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, as a read gives a DATETIME (docs/reading.md). */
export function commitTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

export class ChangeFeed {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  /** Subscribers being caught up from the binary log: not yet given live events. */
  private readonly pending = new Set<Subscriber>();
  private readonly queue: Transaction[] = [];
  private readonly replays: Job[] = [];
  private readonly recent: Transaction[] = [];
  private recentRows = 0;
  /** Every transaction after this place is in `recent` (or still queued). */
  private recentFrom: { file: string; end: number };
  private working = false;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  /** Events handed to subscribers, for metrics. */
  eventsSent = 0;
  /** From the commit of the last live transaction handled to when it was (ms), for metrics. */
  private handledLagMs = 0;
  /** Whether the binary-log connection streams now (false while it is reopened). */
  connected = false;

  private constructor(
    readonly status: FeedStatus,
    private readonly reader: BinlogReader | null,
    private readonly evaluator: Evaluator | null,
    private readonly schema: SchemaCache,
    readonly positions: FeedPositions,
    private readonly log: Log,
    private readonly readerOptions: {
      connection: ConnectionOptions;
      database: string;
      serverId: number;
    } | null,
    from: ReadFrom,
    /** Transactions kept in `recent` at most. */
    private readonly memoryTransactions = FEED_RECENT_TRANSACTIONS,
  ) {
    this.recentFrom = { file: from.file, end: from.position };
    if (reader !== null) reader.onTransaction = (t) => this.read(t);
  }

  /** A feed that is off, for the reason given (the route answers 503 with it). */
  static off(reason: string, schema: SchemaCache, positions: FeedPositions, log: Log): ChangeFeed {
    return new ChangeFeed({ on: false, reason }, null, null, schema, positions, log, null, {
      file: '',
      position: 0,
    });
  }

  /**
   * Starts the feed when the server allows it: the binary log on, in ROW format with FULL
   * images, and a user that may read it. Otherwise a feed that is off, saying why.
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
    const connection = connectionOptions(config.db);
    let evaluator: Evaluator | null = null;
    try {
      evaluator = await Evaluator.open(
        connection,
        sessionSetup({ flavour: db.flavour, cluster: 'single' }, config.queryTimeoutMs),
      );
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
      let status: unknown[] | undefined;
      try {
        [[status]] = (await evaluator.ask('SHOW MASTER STATUS')) as [unknown[][]];
      } catch {
        await evaluator.close();
        return ChangeFeed.off(
          `user ${config.db.user} may not read the binary log (MariaDB: GRANT BINLOG MONITOR, REPLICATION SLAVE; MySQL: GRANT REPLICATION CLIENT, REPLICATION SLAVE)`,
          schema,
          positions,
          log,
        );
      }
      if (status === undefined) {
        await evaluator.close();
        return ChangeFeed.off('the server shows no binary log position', schema, positions, log);
      }
      const from: ReadFrom = { file: String(status[0]), position: Number(status[1]) };
      const readerOptions = {
        connection,
        database: config.db.database,
        // Replicas of one server need ids of their own; one of the upper half is unlikely to be
        // a real replica's.
        serverId: 0x40000000 + Math.floor(Math.random() * 0x3fffffff),
      };
      const reader = new BinlogReader(
        { ...readerOptions, from },
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
        readerOptions,
        from,
        config.feedMemoryTransactions ?? FEED_RECENT_TRANSACTIONS,
      );
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
    reader.onError = (error) => this.lost(error);
    await reader.start();
    this.connected = true;
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

  /** The replication connection broke: read on from where it was, after a pause. */
  private lost(error: Error): void {
    if (this.stopped || this.reader === null || this.retryTimer !== null) return;
    this.log.warn(
      { reason: error.message },
      'change feed: the binary log connection broke; reconnecting',
    );
    this.reader.stop();
    this.connected = false;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.stopped || this.reader === null) return;
      this.reader.restartAt(this.reader.position);
      this.startReader(this.reader).catch((failed: Error) => this.lost(failed));
    }, 1000);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.connected = false;
    for (const set of this.subscribers.values()) for (const s of set) s.finish(null);
    this.subscribers.clear();
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.reader?.stop();
    await this.evaluator?.close();
  }

  /** Subscribers now, for metrics. */
  get subscriberCount(): number {
    let count = 0;
    for (const set of this.subscribers.values()) count += set.size;
    return count;
  }

  /**
   * Adds a subscriber; with `since`, first the events after that place. A place the feed no
   * longer holds in memory is read again from the binary log (410 when the log was purged).
   */
  async subscribe(subscriber: Subscriber, since: LogPosition | null): Promise<void> {
    if (since !== null && this.before(since)) {
      await this.catchUp(subscriber, since);
      return;
    }
    this.add(subscriber);
    if (since !== null) {
      const replay = this.recent.filter(
        (t) => comparePositions(positionOf(t, Number.MAX_SAFE_INTEGER), since) > 0,
      );
      if (replay.length > 0)
        this.replays.push({ transactions: replay, only: subscriber, after: since });
      this.work();
    }
  }

  /** 410 FEED_POSITION_GONE when neither memory nor the binary log still holds `since`. */
  async check(since: LogPosition): Promise<void> {
    if (!this.before(since)) return;
    if (this.evaluator === null) throw feedPositionGone();
    const [logs] = (await this.evaluator.ask('SHOW BINARY LOGS')) as [unknown[][]];
    if (!logs.some((row) => String(row[0]) === since.file)) throw feedPositionGone();
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

  /** Whether the transaction ending at `since` is older than what `recent` holds. */
  private before(since: LogPosition): boolean {
    return comparePositions({ ...since, index: 0 }, { ...this.recentFrom, index: 0 }) < 0;
  }

  /**
   * Reads the log again from `since` on its own connection until it reaches the place `recent`
   * starts from, then hands the subscriber over to the live stream. The hand-over is decided
   * on the event that reaches that place, before anything else runs, so memory cannot move on
   * between the two and leave a gap. 410 when the log no longer has the file.
   */
  private async catchUp(subscriber: Subscriber, since: LogPosition): Promise<void> {
    const options = this.readerOptions;
    if (this.evaluator === null || options === null) throw feedPositionGone();
    const [logs] = (await this.evaluator.ask('SHOW BINARY LOGS')) as [unknown[][]];
    const files = logs.map((row) => String(row[0]));
    if (!files.includes(since.file)) throw feedPositionGone();
    this.pending.add(subscriber);
    this.add(subscriber);
    const caught: Transaction[] = [];
    await new Promise<void>((resolve, reject) => {
      let done = false;
      const reader = new BinlogReader(
        {
          ...options,
          serverId: options.serverId + 1 + Math.floor(Math.random() * 1000),
          from: { file: since.file, position: since.start },
        },
        (transaction) => {
          if (!done) caught.push(transaction);
        },
        (error) => {
          if (done) return;
          done = true;
          reader.stop();
          this.pending.delete(subscriber);
          reject(error);
        },
      );
      const reached = (): boolean => {
        const at = reader.position;
        const from = { ...this.recentFrom, index: 0 };
        return comparePositions({ file: at.file, end: at.position, index: 0 }, from) >= 0;
      };
      const handOver = () => {
        if (done) return;
        done = true;
        reader.stop();
        const from = { ...this.recentFrom, index: 0 };
        const replay = [
          ...caught.filter(
            (t) =>
              comparePositions(positionOf(t, Number.MAX_SAFE_INTEGER), since) > 0 &&
              comparePositions(positionOf(t, 0), from) <= 0,
          ),
          ...this.recent,
        ];
        this.pending.delete(subscriber);
        if (replay.length > 0 && !subscriber.closed) {
          this.replays.push({ transactions: replay, only: subscriber, after: since });
        }
        this.work();
        resolve();
      };
      reader.onProgress = () => {
        if (!done && (reached() || subscriber.closed)) handOver();
      };
      reader.start().then(() => {
        // Nothing to read up to the place `recent` starts from: caught up already.
        if (!done && reached()) handOver();
      }, reader.onError);
    });
  }

  /** A transaction read: queued for the worker, never waited for. */
  private read(transaction: Transaction): void {
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
      this.recentFrom = { file: transaction.file, end: transaction.end };
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
        await this.run(replay);
        continue;
      }
      if (this.queue.length === 0) return;
      // A batch: transactions up to a bound of rows; a change of columns ends it.
      const batch: Transaction[] = [];
      let rows = 0;
      while (this.queue.length > 0 && rows < FEED_BATCH_ROWS) {
        const next = this.queue[0] as Transaction;
        const ddl = next.changes.some((c) => c.op === 'schema' || c.op === 'truncate');
        if (ddl && batch.length > 0) break;
        this.queue.shift();
        batch.push(next);
        rows += next.changes.length;
        if (ddl) break;
      }
      for (const transaction of batch) this.remember(transaction);
      await this.run({ transactions: batch, only: null, after: null });
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
      this.recentFrom = { file: old.file, end: old.end };
    }
  }

  /** Decides a job's transactions for its subscribers and sends each its events. */
  private async run(job: Job): Promise<void> {
    const evaluator = this.evaluator;
    if (evaluator === null) return;
    const tables = new Set<string>();
    for (const t of job.transactions) for (const c of t.changes) tables.add(c.table);
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
    const ddl = job.transactions[0]?.changes.find((c) => c.op === 'schema' || c.op === 'truncate');
    if (ddl !== undefined && job.transactions.length === 1) {
      await this.structural(job.transactions[0] as Transaction, ddl, watching.get(ddl.table) ?? []);
      return;
    }
    const frames = new Map<Subscriber, string[]>();
    for (const [tableName, subscribers] of watching) {
      const table = await this.schema.find(tableName);
      if (table === undefined) continue;
      const changes: Change[] = [];
      const where: { transaction: number; index: number }[] = [];
      job.transactions.forEach((t, transaction) => {
        t.changes.forEach((change, index) => {
          if (change.table === tableName && change.op !== 'schema' && change.op !== 'truncate') {
            changes.push(change);
            where.push({ transaction, index });
          }
        });
      });
      const reads = new Map<string, ReadGroup>();
      const bySubscriber = new Map<Subscriber, { read: ReadGroup; key: ReadGroup }>();
      for (const subscriber of subscribers) {
        const groups = subscriber.groups();
        if (groups === null || subscriber.closed) continue;
        bySubscriber.set(subscriber, groups);
        reads.set(groups.read.key, groups.read);
        reads.set(groups.key.key, groups.key);
      }
      if (bySubscriber.size === 0) continue;
      const evaluated = await evaluator.evaluate(table, changes, [...reads.values()]);
      for (const [subscriber, groups] of bySubscriber) {
        this.framesOf(subscriber, groups, job, changes, where, evaluated, frames);
      }
    }
    for (const [subscriber, list] of frames) {
      for (const text of list) {
        if (text === '') continue;
        const count = text.split('\nevent: ').length - 1;
        if (subscriber.send(text, count)) this.eventsSent += count;
      }
    }
  }

  /** The events a subscriber gets of a job's transactions, one text per transaction. */
  private framesOf(
    subscriber: Subscriber,
    groups: { read: ReadGroup; key: ReadGroup },
    job: Job,
    changes: readonly Change[],
    where: readonly { transaction: number; index: number }[],
    evaluated: Evaluated,
    frames: Map<Subscriber, string[]>,
  ): void {
    const rows = evaluated.matches.get(groups.read.key) ?? new Map<number, string>();
    const keys = evaluated.matches.get(groups.key.key) ?? new Map<number, string>();
    let list = frames.get(subscriber);
    if (list === undefined) {
      list = job.transactions.map(() => '');
      frames.set(subscriber, list);
    }
    const table = JSON.stringify(subscriber.table);
    changes.forEach((change, i) => {
      const place = where[i] as { transaction: number; index: number };
      const transaction = job.transactions[place.transaction] as Transaction;
      const position = positionOf(transaction, place.index);
      if (job.after !== null && comparePositions(position, job.after) <= 0) return;
      const [before, after] = evaluated.images[i] as readonly [number, number];
      const was = before >= 0 && rows.has(before);
      const is = after >= 0 && rows.has(after);
      let op: 'insert' | 'update' | 'delete';
      if (was && is)
        op = change.op === 'insert' ? 'insert' : change.op === 'delete' ? 'delete' : 'update';
      else if (is) op = 'insert';
      else if (was) op = 'delete';
      else return;
      const key = keys.get(op === 'delete' ? before : after) ?? 'null';
      const row = op === 'delete' ? '' : `,"row":${rows.get(after)}`;
      const data = `{"op":"${op}","table":${table},"key":${key}${row},"at":"${commitTime(transaction.at)}","tx":${JSON.stringify(transactionId(transaction))}}`;
      list[place.transaction] +=
        `id: ${this.positions.seal(position)}\nevent: ${op}\ndata: ${data}\n\n`;
    });
  }

  /** TRUNCATE, or a change of columns: the new shape read, then one event to each subscriber. */
  private async structural(
    transaction: Transaction,
    change: Change,
    subscribers: readonly Subscriber[],
  ): Promise<void> {
    const op = change.op as 'truncate' | 'schema';
    if (op === 'schema') {
      this.evaluator?.forget(change.table);
      await this.schema.refresh();
      const table = await this.schema.find(change.table);
      for (const subscriber of subscribers) if (table !== undefined) subscriber.reshape(table);
    }
    const data = `{"op":"${op}","table":${JSON.stringify(change.table)},"at":"${commitTime(transaction.at)}","tx":${JSON.stringify(transactionId(transaction))}}`;
    const text = `id: ${this.positions.seal(positionOf(transaction, 0))}\nevent: ${op}\ndata: ${data}\n\n`;
    for (const subscriber of subscribers) {
      if (subscriber.send(text, 1)) this.eventsSent += 1;
    }
  }
}

/** The transaction's id: its GTID, else its place in the log. */
function transactionId(transaction: Transaction): string {
  return transaction.gtid !== '' ? transaction.gtid : `${transaction.file}:${transaction.start}`;
}

export type { CompiledRead };
