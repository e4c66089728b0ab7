/**
 * The binary-log reader of the change feed (docs/changes.md): one replication connection
 * (@vlasky/zongji, on mysql2) that reads the row events of the gateway's database as a replica
 * does and hands them on a transaction at a time, in commit order: the row changes between a
 * transaction's GTID event and its XID (or COMMIT) event, TRUNCATE and a change of a table's
 * columns as events of their own. A rolled-back transaction is never written to the log, so it
 * never arrives. Values come as the library decodes them, with mysql2's exact-text options
 * (DECIMAL, BIGINT, dates and JSON as text), for the evaluator (decide.ts) to write back.
 * On MariaDB it also keeps the GTID state of where it is (the last GTID of each replication
 * domain), so a reader of another server of the cluster can start at the same place (failover).
 */
import ZongJi from '@vlasky/zongji';
import type { ConnectionOptions } from 'mysql2';
import { OWN_TABLES } from '../db/schema.js';
import { FEED_BINLOG_HEARTBEAT_MS, FEED_SILENT_BEATS } from '../limits.js';
import type { Change, Row } from '../row-change.js';
import type { LogPosition } from './positions.js';

/** One committed transaction of the gateway's database, as the log holds it. */
export interface Transaction {
  /** The server whose log `file`, `start` and `end` are places of (its `-h` host). */
  readonly server: string;
  readonly file: string;
  readonly start: number;
  readonly end: number;
  readonly gtid: string;
  /** The GTID state just before it (MariaDB; '' when unknown): a start there reads it again. */
  readonly before: string;
  /** The commit time, milliseconds since the epoch (the log keeps whole seconds). */
  readonly at: number;
  readonly changes: readonly Change[];
}

/**
 * Where reading starts: just after this place of the log, whose GTID state is `gtids` ('' when
 * unknown). An empty `file`: after the GTID state, wherever this server's log has it.
 */
export interface ReadFrom {
  readonly file: string;
  readonly position: number;
  readonly gtids: string;
}

/** A MariaDB GTID, `domain-server-sequence`. */
const MARIADB_GTID = /^(\d+)-\d+-\d+$/;

/** A GTID state (`0-1-42,1-1-7`) by domain; MySQL's GTIDs and '' give none. */
export function parseGtidState(state: string): Map<string, string> {
  const domains = new Map<string, string>();
  for (const gtid of state.split(',')) {
    const match = MARIADB_GTID.exec(gtid.trim());
    if (match !== null) domains.set(match[1] as string, gtid.trim());
  }
  return domains;
}

/** The sequence number of a MariaDB GTID. */
export function sequenceOf(gtid: string): bigint {
  return BigInt(gtid.slice(gtid.lastIndexOf('-') + 1));
}

/** A statement that changes a table's rows wholesale or its columns, and the table it names. */
const DDL =
  /^\s*(?:\/\*.*?\*\/\s*)*(TRUNCATE|ALTER|DROP|RENAME|CREATE|OPTIMIZE|REPAIR)\b(?:\s+(?:ONLINE|IGNORE|OR\s+REPLACE|TEMPORARY))*(?:\s+TABLE)?(?:\s+IF\s+(?:NOT\s+)?EXISTS)?\s+(?:`((?:[^`]|``)+)`|(\w+))(?:\s*\.\s*(?:`((?:[^`]|``)+)`|(\w+)))?/is;

/** The table a DDL statement names and whether it is a TRUNCATE; null for other statements. */
export function ddlTable(
  statement: string,
  database: string,
): { op: 'truncate' | 'schema'; table: string } | null {
  const match = DDL.exec(statement);
  if (match === null) return null;
  const verb = (match[1] as string).toUpperCase();
  const first = (match[2] ?? match[3] ?? '').replace(/``/g, '`');
  const second = match[4] ?? match[5];
  const [schema, table] =
    second === undefined ? [database, first] : [first, second.replace(/``/g, '`')];
  if (schema !== database) return null;
  return { op: verb === 'TRUNCATE' ? 'truncate' : 'schema', table };
}

/**
 * The events @vlasky/zongji 0.9.0 cannot decode, by its event name: it skips each, goes on
 * with the next, and the first time on a connection raises an error whose message starts so.
 */
const UNDECODABLE: Readonly<Record<string, { raised: string; reason: string }>> = {
  transactionpayload: {
    raised: 'Server sent a TRANSACTION_PAYLOAD_EVENT',
    reason: 'a compressed transaction (binlog_transaction_compression=ON)',
  },
  partialupdaterows: {
    raised: 'Server sent a PARTIAL_UPDATE_ROWS_EVENT',
    reason: 'a partial JSON update (binlog_row_value_options=PARTIAL_JSON)',
  },
};

/** Whether an error the library raised is its word that it skipped an event it cannot decode. */
export function isUndecodableError(error: Error): boolean {
  return Object.values(UNDECODABLE).some(({ raised }) => error.message?.startsWith(raised));
}

interface ZongJiEvent {
  getEventName(): string;
  nextPosition: number;
  timestamp: number;
  gtid?: string;
  binlogName?: string;
  position?: number;
  query?: string;
  schema?: string;
  tableId?: number;
  tableMap?: Record<number, { parentSchema: string; tableName: string }>;
  tableName?: string;
  schemaName?: string;
  rows?: (Row | { before: Row; after: Row })[];
}

/** What the reader uses of zongji's own replication connection (a mysql2 connection). */
interface ReplicationConnection {
  query(sql: string, callback: (error: Error | null) => void): void;
  readonly stream?: { on(event: 'data', listener: () => void): void };
}

export interface ZongJiInstance {
  /** Made by start(), before the dump command is queued on it. */
  readonly connection?: ReplicationConnection;
  on(event: 'binlog', listener: (event: ZongJiEvent) => void): void;
  on(event: 'ready', listener: () => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'stopped', listener: () => void): void;
  start(options: Record<string, unknown>): void;
  stop(): void;
}

const ROW_EVENTS: Readonly<Record<string, 'insert' | 'update' | 'delete'>> = {
  writerows: 'insert',
  updaterows: 'update',
  deleterows: 'delete',
};

export interface ReaderOptions {
  readonly connection: ConnectionOptions;
  readonly database: string;
  /** The replica id this connection announces: unique among the server's replicas. */
  readonly serverId: number;
  /** The server's name in positions (its `-h` host). */
  readonly server: string;
  readonly from: ReadFrom;
}

/**
 * One replication connection from a place in the log on. Transactions go to `onTransaction`
 * as soon as their commit event is read; the reader never waits for whoever takes them.
 */
export class BinlogReader {
  private zongji: ZongJiInstance | null = null;
  /** Checks that the connection still hears from the server (watch). */
  private watchdog: NodeJS.Timeout | null = null;
  private file: string;
  /** The end of the last event read: where a transaction starting next starts. */
  private cursor: number;
  /** The last GTID read of each domain: the state a reader elsewhere starts from. */
  private gtids: Map<string, string>;
  private open: {
    file: string;
    start: number;
    gtid: string;
    before: string;
    changes: Change[];
    /** The gateway's tables this transaction's table maps named (a row event's table). */
    tables: Set<string>;
    /** Why part of it could not be decoded, and of which tables (null: unknown). */
    undecodable: { reason: string; tables: readonly string[] | null } | null;
  } | null = null;

  /** Called after each event read, once `position` has moved past it. */
  onProgress: () => void = () => {};

  constructor(
    private readonly options: ReaderOptions,
    public onTransaction: (transaction: Transaction) => void,
    public onError: (error: Error) => void,
  ) {
    this.file = options.from.file;
    this.cursor = options.from.position;
    this.gtids = parseGtidState(options.from.gtids);
  }

  /** The next start() reads from here (a transaction read in part is read again whole). */
  restartAt(from: ReadFrom): void {
    this.open = null;
    this.file = from.file;
    this.cursor = from.position;
    this.gtids = parseGtidState(from.gtids);
  }

  /** The server this reader reads (its `-h` host). */
  get server(): string {
    return this.options.server;
  }

  /** Where the next transaction starts: a reader started there loses nothing. */
  get position(): ReadFrom {
    return {
      file: this.file,
      position: this.open?.start ?? this.cursor,
      gtids: this.open?.before ?? this.gtidState,
    };
  }

  private get gtidState(): string {
    return [...this.gtids.values()].join(',');
  }

  /**
   * Resolves once the server streams the log to us (its first event has come); rejects when it
   * refuses, or when nothing comes for FEED_SILENT_BEATS heartbeat periods.
   */
  start(): Promise<void> {
    const zongji = new (ZongJi as unknown as new (options: ConnectionOptions) => ZongJiInstance)({
      ...this.options.connection,
      // Exact text, as the gateway's own connections read values (db/pool.ts).
      dateStrings: true,
      timezone: 'Z',
      supportBigNumbers: true,
      bigNumberStrings: true,
      jsonStrings: true,
      decimalNumbers: false,
    });
    this.zongji = zongji;
    const { ready, fail, heard } = this.receive(zongji);
    {
      const schemas = {
        includeSchema: { [this.options.database]: true },
        // The gateway's own tables are never served: a webhook's position written after each
        // delivery would otherwise come back through the feed as a change.
        excludeSchema: { [this.options.database]: [...OWN_TABLES] },
      };
      // Without a file, after the GTID state: the server finds the place in its own log.
      zongji.start(
        this.file === ''
          ? { serverId: this.options.serverId, gtidSet: this.gtidState, ...schemas }
          : {
              serverId: this.options.serverId,
              filename: this.file,
              position: this.cursor,
              ...schemas,
            },
      );
      heard.to(this.watch(zongji, fail));
    }
    return ready;
  }

  /**
   * Takes the library's events and errors from `zongji` (start() makes it): `ready` resolves at
   * its first event (the server sends one at once, the log's name), not at the library's
   * `ready`, which comes when the dump is asked for: a reconnection into a connection gone
   * silent would count as connected (and make the cache live) until the heartbeat watch said
   * otherwise. It rejects at an error before it.
   * After it, an error is a broken connection (onError), except the library's word that it
   * skipped an event it cannot decode: it goes on with the next event, and so does the reader
   * (take() marks the transaction). `fail` is that handling, for the heartbeat watch; every event
   * calls what `heard` is set to.
   */
  receive(zongji: ZongJiInstance): {
    ready: Promise<void>;
    fail: (error: Error) => void;
    heard: { to(listener: () => void): void };
  } {
    let hear = () => {};
    let fail: (error: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      let started = false;
      const begin = () => {
        if (started) return;
        started = true;
        resolve();
      };
      fail = (error) => {
        if (!started) {
          started = true;
          this.stop();
          reject(error);
          return;
        }
        this.onError(error);
      };
      zongji.on('error', (error) => {
        if (started && isUndecodableError(error)) return;
        fail(error);
      });
      zongji.on('binlog', (event) => {
        hear();
        begin();
        // A heartbeat only says the connection lives: no place of a transaction.
        if (event.getEventName() === 'heartbeat') return;
        this.take(event);
        this.onProgress();
      });
    });
    return {
      ready,
      fail: (error) => fail(error),
      heard: {
        to: (listener) => {
          hear = listener;
        },
      },
    };
  }

  /**
   * Asks for heartbeats on the replication connection (queued on it before the dump command,
   * which start() queues only after its own statements), and checks every period that
   * something came on it since the one before: any bytes (a long event takes many periods to
   * arrive whole), an event, a heartbeat. FEED_SILENT_BEATS periods in a row without: the
   * connection is dead, as if it had failed. Returns what an event read calls.
   */
  private watch(zongji: ZongJiInstance, fail: (error: Error) => void): () => void {
    const connection = zongji.connection;
    const nanoseconds = FEED_BINLOG_HEARTBEAT_MS * 1_000_000;
    // MySQL 8.4 reads the `source_` name, MariaDB and older MySQL the `master_` one.
    connection?.query(
      `SET @master_heartbeat_period = ${nanoseconds}, @source_heartbeat_period = ${nanoseconds}`,
      (error) => {
        if (error !== null && this.zongji === zongji) fail(error);
      },
    );
    let heard = true;
    let silent = 0;
    const hear = () => {
      heard = true;
    };
    // The connection's socket, hooked again when TLS puts another one in its place.
    let hooked: object | undefined;
    const hook = () => {
      const stream = zongji.connection?.stream;
      if (stream === undefined || stream === hooked) return;
      stream.on('data', hear);
      hooked = stream;
      heard = true;
    };
    hook();
    const watchdog = setInterval(() => {
      if (this.zongji !== zongji) {
        clearInterval(watchdog);
        return;
      }
      hook();
      if (heard) {
        heard = false;
        silent = 0;
        return;
      }
      if (++silent < FEED_SILENT_BEATS) return;
      clearInterval(watchdog);
      fail(
        new Error(
          `nothing came on the binary log connection for ${(FEED_SILENT_BEATS * FEED_BINLOG_HEARTBEAT_MS) / 1000} s (heartbeats every ${FEED_BINLOG_HEARTBEAT_MS / 1000} s): taken as dead`,
        ),
      );
    }, FEED_BINLOG_HEARTBEAT_MS);
    watchdog.unref();
    this.watchdog = watchdog;
    return hear;
  }

  stop(): void {
    if (this.watchdog !== null) clearInterval(this.watchdog);
    this.watchdog = null;
    const zongji = this.zongji;
    this.zongji = null;
    if (zongji === null) return;
    try {
      zongji.stop();
    } catch {
      // Already closed by the server: nothing left to stop.
    }
  }

  private take(event: ZongJiEvent): void {
    const name = event.getEventName();
    if (name === 'rotate') {
      this.file = event.binlogName as string;
      this.cursor = event.position ?? 4;
      return;
    }
    const start = this.cursor;
    if (event.nextPosition > 0) this.cursor = event.nextPosition;
    switch (name) {
      case 'gtid':
      case 'mariadbgtid':
        this.opened(start, event.gtid ?? '');
        return;
      case 'anonymousgtid':
        // MySQL with gtid_mode OFF (its default) starts each transaction with one of these: a
        // transaction with no id of its own (its place names it). Without it no row was sent.
        this.opened(start, '');
        return;
      case 'tablemap':
        if (this.open !== null && event.schemaName === this.options.database) {
          this.open.tables.add(event.tableName as string);
        }
        return;
      case 'transactionpayload': {
        // The whole transaction, compressed, after its GTID event: its tables are inside.
        const open = this.open ?? this.opened(start, event.gtid ?? '');
        open.undecodable = {
          reason: (UNDECODABLE[name] as { reason: string }).reason,
          tables: null,
        };
        this.commit(event);
        return;
      }
      case 'partialupdaterows': {
        // Of a table its table maps named; none of the gateway's: another database's.
        const open = this.open;
        if (open === null || open.tables.size === 0) return;
        open.undecodable ??= {
          reason: (UNDECODABLE[name] as { reason: string }).reason,
          tables: [...open.tables],
        };
        return;
      }
      case 'writerows':
      case 'updaterows':
      case 'deleterows': {
        const table = event.tableMap?.[event.tableId as number];
        if (this.open === null || table === undefined) return;
        if (table.parentSchema !== this.options.database) return;
        const op = ROW_EVENTS[name] as 'insert' | 'update' | 'delete';
        for (const row of event.rows ?? []) {
          const pair = row as { before: Row; after: Row };
          this.open.changes.push({
            op,
            table: table.tableName,
            before: op === 'insert' ? null : op === 'update' ? pair.before : (row as Row),
            after: op === 'delete' ? null : op === 'update' ? pair.after : (row as Row),
          });
        }
        return;
      }
      case 'xid':
        this.commit(event);
        return;
      case 'query': {
        const statement = event.query ?? '';
        if (/^\s*(BEGIN|XA\s+START)\b/i.test(statement)) return;
        if (/^\s*(COMMIT|XA\s+COMMIT)\b/i.test(statement)) {
          this.commit(event);
          return;
        }
        const ddl = ddlTable(statement, event.schema ?? this.options.database);
        if (ddl !== null && this.open !== null) this.open.changes.push(ddl);
        // A statement of its own (DDL) is its own transaction.
        this.commit(event);
        return;
      }
      default:
        return;
    }
  }

  /** A transaction open from `start`, of GTID `gtid` ('': none, MySQL without GTIDs). */
  private opened(start: number, gtid: string): NonNullable<BinlogReader['open']> {
    this.open = {
      file: this.file,
      start,
      gtid,
      before: this.gtidState,
      changes: [],
      tables: new Set(),
      undecodable: null,
    };
    return this.open;
  }

  private commit(event: ZongJiEvent): void {
    const open = this.open;
    this.open = null;
    if (open === null) return;
    const domain = MARIADB_GTID.exec(open.gtid)?.[1];
    if (domain !== undefined) this.gtids.set(domain, open.gtid);
    if (open.undecodable !== null) {
      // What was decoded of it is not the transaction: none of it goes on, only what is lost.
      const { reason, tables } = open.undecodable;
      open.changes =
        tables === null
          ? [{ op: 'undecodable', table: null, reason }]
          : tables.map((table) => ({ op: 'undecodable', table, reason }));
    }
    if (open.changes.length === 0) return;
    this.onTransaction({
      server: this.options.server,
      file: open.file,
      start: open.start,
      end: this.cursor,
      gtid: open.gtid,
      before: open.before,
      at: event.timestamp,
      changes: open.changes,
    });
  }
}

/** A transaction's place, for an event id (index -1: the transaction as a whole). */
export function positionOf(transaction: Transaction, index: number): LogPosition {
  return {
    server: transaction.server,
    file: transaction.file,
    start: transaction.start,
    end: transaction.end,
    index,
    gtid: transaction.gtid,
    before: transaction.before,
  };
}
