/**
 * The execute stage: every statement the gateway runs goes through this object. It owns the
 * pool (handed out within a bound, acquire.ts), a control connection of its own for KILL QUERY
 * and health pings (so neither waits behind the pool it is checking or freeing), and the
 * server's flavour (MariaDB and MySQL differ in statement time limits and JSON). With several
 * hosts (`-h db1,db2`) all of that is for the one host in use, and is rebuilt on the next host
 * when it stops answering (hosts.ts). Nothing else sees a mysql2 handle.
 */
import mysql, {
  type FieldPacket,
  type Pool,
  type PoolConnection,
  type ResultSetHeader,
  type RowDataPacket,
} from 'mysql2';
import type { PoolConnection as PromiseConnection, Pool as PromisePool } from 'mysql2/promise';
import { mapDbError } from '../db/errors.js';
import {
  allHosts,
  connectionOptions,
  createPool,
  type DbConfig,
  type DbHost,
  poolOptions,
  type ReadConsistency,
  type ServerKind,
  sessionSetup,
} from '../db/pool.js';
import { HEALTH_TIMEOUT_MS, MAX_ROUTINE_RESULT_CHARS } from '../limits.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { Flavour } from '../types/column-kind.js';
import { Acquirer, type PoolStats } from './acquire.js';
import { bind } from './bind.js';
import { type CallJob, type CallResult, callRetrying, runCall } from './call.js';
import { type Caller, GATEWAY } from './caller.js';
import { type HostBackend, type HostEvents, HostSwitch } from './hosts.js';
import {
  dropsConnection,
  readRetrying,
  readRetryingBy,
  writeRetrying,
  writeRetryingBy,
} from './retry.js';
import { type RowFlow, type RowSink, streamRetrying } from './stream.js';
import { withTimeLimit } from './time-limit.js';
import { Watchdog } from './watchdog.js';
import {
  type ChainStep,
  runAlone,
  runChain,
  runTransaction,
  type TransactionJob,
  type WriteJob,
  type WriteResult,
} from './write.js';

export type { Caller, Flavour, PoolStats };

export interface Database {
  /** What the server in use is (with `-h db1,db2,…`, the host in use: hosts.ts). */
  readonly flavour: Flavour;
  /** Whether it is a Galera node, a Group Replication member or a single server. */
  readonly cluster: ServerKind['cluster'];
  /** Told when the gateway moves to another host of `-h` (main.ts logs it). */
  events: HostEvents;
  /**
   * A SELECT whose rows go to the sink as they arrive (stream.ts). Every method tries again
   * where that is safe (retry.ts). `caller`: whose request it is (caller.ts); the gateway's own
   * when absent. `rows`: the rows its answer is estimated to hold (0: unknown), its weight in
   * the pool's turns (acquire.ts).
   */
  stream(query: CompiledQuery, sink: RowSink, caller?: Caller, rows?: number): Promise<RowFlow>;
  /** A `SELECT COUNT(*)`: its one number. */
  count(query: CompiledQuery, caller?: Caller): Promise<number>;
  /**
   * A SELECT whose result the plan bounds (plan/small-read.ts): its rows as arrays in select
   * order, all at once, by callback (every small read's path: no promise); retried
   * like a stream whose connection broke before its first row.
   */
  arrays(
    query: CompiledQuery,
    done: (error: unknown, rows?: unknown[][]) => void,
    caller?: Caller,
  ): void;
  /** A small SELECT (schema, users): its rows as objects. */
  rows<T extends object = Record<string, unknown>>(query: CompiledQuery): Promise<T[]>;
  /** One statement under autocommit (users, DDL), retried as a write (retry.ts). */
  run(query: CompiledQuery): Promise<{ affectedRows: number; insertId: number }>;
  /**
   * A write job (write.ts): one autocommit statement or one transaction, as the job says; all or
   * none, retried where safe (retry.ts).
   */
  write(job: WriteJob, caller?: Caller): Promise<WriteResult>;
  /**
   * Several write jobs in one transaction on one connection, all or none (write.ts runChain),
   * each job's result in order; retried as one write. `failed.step` is the step a failure came
   * from.
   */
  writeChain(
    steps: readonly ChainStep[],
    caller?: Caller,
    failed?: { step: number },
  ): Promise<WriteResult[]>;
  /**
   * A stored routine's call (call.ts): on a connection of the caller's fair share, under the
   * caller's time limit, never inside a transaction of ours; a connection the routine left
   * changed, or whose call failed, is dropped rather than given back.
   */
  call(job: CallJob, caller?: Caller): Promise<CallResult>;
  /**
   * True when the server answers within `HEALTH_TIMEOUT_MS`; never waits behind the pool.
   * `fresh`: the answer comes from a ping sent after the call (not one already in flight).
   */
  ping(fresh?: boolean): Promise<boolean>;
  /** The pool right now, read-only (for metrics). */
  stats(): PoolStats;
  /** Streamed reads the pool took back for other requests (acquire.ts), for metrics. */
  takenBack(): number;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** The server stops any statement running longer (504). */
  readonly statementTimeoutMs: number;
  /** A streamed read whose client takes nothing for this long is cut (stream.ts). */
  readonly stallTimeoutMs: number;
  /**
   * Bytes per second a streamed read's client must take, measured over waits for it as long as
   * the stall timeout (stream.ts); 0 or absent: no minimum.
   */
  readonly minReadRate?: number;
  /**
   * The time limit of statements run for a request without a token (caller.ts); absent: the
   * statement time limit, as for everyone.
   */
  readonly anonymousTimeoutMs?: number;
  /** `--read-consistency` (db/pool.ts); `eventual` when absent. */
  readonly readConsistency?: ReadConsistency;
}

/**
 * Whether a Galera node can serve: one that lost quorum, or is still joining, answers SELECT 1
 * but refuses every statement on a table (1047, "WSREP has not yet prepared node for
 * application use"). wsrep_ready says which.
 */
async function galeraReady(connection: Pick<PromisePool, 'query'>): Promise<boolean> {
  const [rows] = await connection.query<RowDataPacket[]>("SHOW STATUS LIKE 'wsrep_ready'");
  return String(rows[0]?.Value).toUpperCase() === 'ON';
}

/**
 * Asks the server what it is, on a connection of its own; also proves the login works, and that
 * a Galera node can serve (one that cannot is no host to use). SHOW VARIABLES names a variable
 * only where it exists, so neither name is an error anywhere: wsrep_on is ON on a Galera node
 * (MariaDB has it OFF without Galera), and group_replication_consistency exists once MySQL's
 * Group Replication plugin is loaded.
 */
async function detectServer(config: DbConfig): Promise<ServerKind> {
  const probe = mysql.createConnection(connectionOptions(config)).promise();
  try {
    const [versions] = await probe.query<RowDataPacket[]>('SELECT VERSION() AS version');
    const [variables] = await probe.query<RowDataPacket[]>(
      "SHOW VARIABLES WHERE Variable_name IN ('wsrep_on', 'group_replication_consistency')",
    );
    const value = (name: string) =>
      variables.find((row) => String(row.Variable_name).toLowerCase() === name)?.Value;
    const flavour = /mariadb/i.test(String(versions[0]?.version)) ? 'mariadb' : 'mysql';
    const galera = String(value('wsrep_on') ?? '').toUpperCase() === 'ON';
    if (galera && !(await galeraReady(probe))) {
      throw new Error('the Galera node is not ready to serve (wsrep_ready is OFF)');
    }
    const groupReplication = value('group_replication_consistency') !== undefined;
    return {
      flavour,
      cluster: galera ? 'galera' : groupReplication ? 'group-replication' : 'single',
    };
  } finally {
    probe.destroy();
  }
}

/** The pool's array rows (db/pool.ts) as objects keyed by column name, for the few small reads. */
function byName(rows: readonly unknown[][], fields: readonly FieldPacket[]): object[] {
  const names = fields.map((field) => field.name);
  // A loop, not Object.fromEntries: the schema's 10,000 column rows made 110,000 pairs at once.
  return rows.map((row) => {
    const object: Record<string, unknown> = {};
    for (let at = 0; at < names.length; at++) object[names[at] as string] = row[at];
    return object;
  });
}

/**
 * Resolves with the promise's value, or rejects when it takes longer than `ms`. The verdict
 * waits one turn of the event loop after the timer (setImmediate runs after the poll for I/O):
 * an answer that arrived while the gateway was busy (a loaded machine, a long synchronous task)
 * is read first, so a late timer never calls a live server silent.
 */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => setImmediate(() => reject(new Error(`no answer within ${ms} ms`))),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The promise face of a pool connection, made once per connection rather than on every
 * statement (each one is an EventEmitter with two listeners). It holds no state of its
 * own besides the connection, so every checkout of the same connection may share it.
 */
const promiseFaces = new WeakMap<PoolConnection, PromiseConnection>();

function promiseOf(connection: PoolConnection): PromiseConnection {
  let face = promiseFaces.get(connection);
  if (face === undefined) {
    face = connection.promise();
    promiseFaces.set(connection, face);
  }
  return face;
}

/**
 * Everything of one host: the statement pool, the control connections for KILL QUERY and pings
 * (so neither waits behind the pool it is checking or freeing), the watchdog, and what the
 * server is. A ping without answer tells `unanswered`: the host may be gone (hosts.ts).
 */
interface Backend extends HostBackend {
  readonly server: ServerKind;
  readonly pool: Pool;
  readonly acquirer: Acquirer;
  readonly watchdog: Watchdog;
  ping(fresh?: boolean): Promise<boolean>;
  kill(threadId: number): Promise<void>;
  /** Ends a connection (KILL CONNECTION): a routine past its time limit (call.ts). */
  end(threadId: number): Promise<void>;
}

async function openBackend(
  config: DbConfig,
  host: DbHost,
  options: DatabaseOptions,
  unanswered: (backend: Backend) => void,
): Promise<Backend> {
  const atHost: DbConfig = { ...config, host: host.host, port: host.port };
  const server = await detectServer(atHost);
  const pool: Pool = createPool(
    atHost,
    sessionSetup(server, options.statementTimeoutMs, options.readConsistency),
  );
  // Two connections: a KILL and a health ping never queue behind each other for long.
  const control: PromisePool = mysql
    .createPool({ ...poolOptions(atHost), connectionLimit: 2, maxIdle: 2 })
    .promise();

  /**
   * The ping in flight, shared by every caller that asks meanwhile — except a `fresh` one
   * (/health), which sends its own: the answer to a ping sent earlier may describe a server that
   * has frozen since. On Galera it asks whether the node can serve (galeraReady): a node
   * without quorum is down for us, for /health, and for the switch to the next host of -h.
   */
  let pinging: Promise<boolean> | null = null;
  const ping = (fresh = false): Promise<boolean> => {
    if (pinging && !fresh) return pinging;
    const question =
      server.cluster === 'galera'
        ? galeraReady(control)
        : control.query('SELECT 1').then(() => true);
    const answer: Promise<boolean> = within(question, HEALTH_TIMEOUT_MS)
      .catch(() => false)
      .then((ready) => {
        if (!ready) unanswered(backend);
        return ready;
      })
      .finally(() => {
        if (pinging === answer) pinging = null;
      });
    pinging = answer;
    return answer;
  };
  const watchdog = new Watchdog(ping);
  const acquirer = new Acquirer(pool, { isAlive: ping, maxWaitMs: options.statementTimeoutMs });
  const backend: Backend = {
    host,
    server,
    pool,
    acquirer,
    watchdog,
    ping,
    kill: async (threadId) => {
      await control.query('KILL QUERY ?', [threadId]);
    },
    end: async (threadId) => {
      await control.query('KILL CONNECTION ?', [threadId]);
    },
    retire: () => {
      // The host does not answer: nothing in flight there waits for it, and nothing waits for
      // its goodbye either.
      watchdog.failAll();
      acquirer.close();
      pool.end(() => {});
      control.end().catch(() => {});
    },
    close: async () => {
      watchdog.close();
      acquirer.close();
      await Promise.all([pool.promise().end(), control.end()]);
    },
  };
  return backend;
}

/**
 * Connects (rejecting with the driver's error when it cannot; with several hosts, when none
 * answers: NoHostAnswered) and opens the pool on the first host of `-h` that answers.
 */
export async function openDatabase(config: DbConfig, options: DatabaseOptions): Promise<Database> {
  let hosts: HostSwitch<Backend> | undefined;
  // An unanswered ping needs no second one to confirm it.
  const unanswered = (backend: Backend) => hosts?.suspect(backend, true);
  hosts = await HostSwitch.start(allHosts(config), (host) =>
    openBackend(config, host, options, unanswered),
  );
  const switcher = hosts;
  const several = config.otherHosts !== undefined && config.otherHosts.length > 0;

  /** An error that says the host may be gone (refused connect, lost connection) is reported. */
  const report = (backend: Backend, error: unknown) => {
    if (several && mapDbError(error).code === 'DATABASE_UNAVAILABLE') switcher.suspect(backend);
  };
  /**
   * A pool connection of the host in use, by callback (no promise: this is every statement's
   * path), with the host that lent it, in the fair turn of the client at `address`
   * (acquire.ts). While a search for another host is under way, one of the host it settles on.
   * A failure to get one is reported (the host may be gone). The borrower has the watchdog watch
   * it (stream.ts does so itself).
   */
  function borrow(
    address: string,
    done: (error: unknown, held?: PoolConnection, backend?: Backend) => void,
    rows = 0,
  ): void {
    const settling = switcher.settling;
    if (settling) {
      settling.then(() => borrow(address, done, rows), done);
      return;
    }
    const backend = switcher.backend;
    backend.acquirer.lend(
      address,
      (error, held) => {
        if (held === undefined) {
          report(backend, error);
          done(error);
          return;
        }
        done(null, held, backend);
      },
      rows,
    );
  }

  /**
   * Gives a borrowed connection back, or drops it when it broke (mysql2 3.x already takes a
   * connection with a fatal error out of the pool; destroying it says so here, and also drops
   * one that leads to a Galera node without quorum). A failure is reported.
   */
  function giveBack(backend: Backend, held: PoolConnection, error: unknown): void {
    backend.watchdog.release(held);
    if (error === null || error === undefined) {
      backend.acquirer.giveBack(held);
      return;
    }
    report(backend, error);
    backend.acquirer.giveBack(held, dropsConnection(error));
  }

  /**
   * Runs `work` on a borrowed connection and gives it back. Driver errors pass through as they
   * are: the retries (retry.ts) read them, the HTTP error handler maps them.
   */
  function using<T>(address: string, work: (held: PoolConnection) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      borrow(address, (error, held, backend) => {
        if (held === undefined || backend === undefined) {
          reject(error);
          return;
        }
        backend.watchdog.watch(held);
        let working: Promise<T>;
        try {
          working = work(held);
        } catch (thrown) {
          working = Promise.reject(thrown);
        }
        working.then(
          (value) => {
            giveBack(backend, held, null);
            resolve(value);
          },
          (failure: unknown) => {
            giveBack(backend, held, failure);
            reject(failure);
          },
        );
      });
    });
  }

  /**
   * using() by callback: `work` on a borrowed connection, which is given back when work calls
   * `finish` (the path of small reads and one-statement writes, without promises).
   */
  function usingBy<T>(
    address: string,
    work: (held: PoolConnection, finish: (error: unknown, value?: T) => void) => void,
    done: (error: unknown, value?: T) => void,
  ): void {
    borrow(address, (error, held, backend) => {
      if (held === undefined || backend === undefined) {
        done(error);
        return;
      }
      backend.watchdog.watch(held);
      // mysql2 calls an execute's callback twice when the connection breaks while the statement
      // is being prepared (once for the prepare, once for the execute queued behind it): the
      // second call would retry the read again and answer the request twice.
      let finished = false;
      const finish = (failure: unknown, value?: T) => {
        if (finished) return;
        finished = true;
        giveBack(backend, held, failure);
        done(failure, value);
      };
      try {
        work(held, finish);
      } catch (thrown) {
        finish(thrown);
      }
    });
  }

  /** One SELECT's rows as arrays, by callback. */
  function selectOnce(
    query: CompiledQuery,
    address: string,
    done: (error: unknown, rows?: unknown[][]) => void,
  ) {
    usingBy<unknown[][]>(
      address,
      (held, finish) => {
        held.execute<RowDataPacket[][]>(query.sql, bind(query.params), (failure, rows) =>
          finish(failure, rows),
        );
      },
      done,
    );
  }

  /** A SELECT's rows as arrays, all at once; once more when its connection broke (retry.ts). */
  const arrays = (
    query: CompiledQuery,
    done: (error: unknown, rows?: unknown[][]) => void,
    caller: Caller = GATEWAY,
  ) => {
    const limited = timed(query, caller);
    readRetryingBy((attempt) => selectOnce(limited, caller.client, attempt), done);
  };

  const anonymousMs = options.anonymousTimeoutMs ?? options.statementTimeoutMs;
  /**
   * Whether `caller`'s statements run under a limit of their own: a request without a token,
   * when --anonymous-query-timeout differs from the session's limit (db/pool.ts).
   */
  const ownLimit = (caller: Caller) =>
    caller.anonymous && anonymousMs !== options.statementTimeoutMs;
  /** The statement as it runs for `caller` (a new query object only under a limit of its own). */
  const timed = (query: CompiledQuery, caller: Caller): CompiledQuery =>
    ownLimit(caller) ? withTimeLimit(switcher.backend.server.flavour, query, anonymousMs) : query;
  /** A transaction's statements, guards and read-back as they run for `caller`. */
  const timedWrite = (job: TransactionJob, caller: Caller): TransactionJob => {
    if (!ownLimit(caller)) return job;
    const timedAll = (queries: readonly CompiledQuery[] | null) =>
      queries?.map((query) => timed(query, caller)) ?? null;
    const { readBack } = job;
    return {
      ...job,
      statements: job.statements.map((statement) => timed(statement, caller)),
      guards: job.guards.map((guard) => ({
        ...guard,
        lookup: guard.lookup === null ? null : timed(guard.lookup, caller),
        queries: (outcome) => timedAll(guard.queries(outcome)),
      })),
      readBack:
        readBack === null
          ? null
          : {
              lookup: readBack.lookup === null ? null : timed(readBack.lookup, caller),
              queries: (outcome) => timedAll(readBack.queries(outcome)) ?? [],
            },
    };
  };

  return {
    get flavour() {
      return switcher.backend.server.flavour;
    },
    get cluster() {
      return switcher.backend.server.cluster;
    },
    get events() {
      return switcher.events;
    },
    set events(events: HostEvents) {
      switcher.events = events;
    },
    // Each attempt on the host in use at its start (a retry may go to the next host of -h).
    stream: (query, sink, caller = GATEWAY, rows = 0) => {
      let used = switcher.backend;
      // With several hosts, a failure tells the switch which host it came from.
      const told: RowSink = several
        ? {
            row: (values) => sink.row(values),
            end: () => sink.end(),
            socket: () => sink.socket?.() ?? null,
            fail: (error, cause) => {
              report(used, cause);
              sink.fail(error, cause);
            },
          }
        : sink;
      return streamRetrying(
        () =>
          new Promise((resolve, reject) => {
            borrow(
              caller.client,
              (error, held, backend) => {
                if (held === undefined || backend === undefined) {
                  reject(error);
                  return;
                }
                used = backend;
                resolve({
                  connection: held,
                  options: {
                    kill: backend.kill,
                    stallMs: options.stallTimeoutMs,
                    minRate: options.minReadRate ?? 0,
                    watchdog: backend.watchdog,
                    lender: backend.acquirer,
                  },
                });
              },
              rows,
            );
          }),
        timed(query, caller),
        told,
      );
    },
    count: (query, caller) =>
      new Promise((resolve, reject) => {
        arrays(
          query,
          (error, rows) => (error ? reject(error) : resolve(Number(rows?.[0]?.[0] ?? 0))),
          caller,
        );
      }),
    arrays,
    rows: <T extends object>(query: CompiledQuery) =>
      readRetrying(() =>
        using(GATEWAY.client, async (held) => {
          const c = promiseOf(held);
          const [rows, fields] =
            query.params.length === 0
              ? await c.query<RowDataPacket[][]>(query.sql)
              : await c.execute<RowDataPacket[][]>(query.sql, bind(query.params));
          return byName(rows, fields) as T[];
        }),
      ),
    run: (query) =>
      writeRetrying((progress) =>
        using(GATEWAY.client, async (held) => {
          const c = promiseOf(held);
          // The statement commits itself: lost after this, its outcome is unknown (retry.ts).
          progress.committing = true;
          const [result] =
            query.params.length === 0
              ? await c.query<ResultSetHeader>(query.sql)
              : await c.execute<ResultSetHeader>(query.sql, bind(query.params));
          return { affectedRows: result.affectedRows, insertId: result.insertId };
        }),
      ),
    write: (job, caller = GATEWAY) => {
      const address = caller.client;
      if (job.mode === 'transaction') {
        const run = timedWrite(job, caller);
        return writeRetrying((progress) =>
          using(address, (held) => runTransaction(held, run, progress)),
        );
      }
      // Most writes: one autocommit statement, run by callback (hot path).
      const alone = ownLimit(caller) ? { ...job, statement: timed(job.statement, caller) } : job;
      return writeRetryingBy<WriteResult>((progress, done) =>
        usingBy(address, (held, finish) => runAlone(held, alone, progress, finish), done),
      );
    },
    writeChain: (steps, caller = GATEWAY, failed = { step: 0 }) => {
      const timedSteps = steps.map(
        (step): ChainStep => ({
          ...step,
          job: (earlier) => {
            const job = step.job(earlier);
            if (job.mode === 'transaction') return timedWrite(job, caller);
            return ownLimit(caller) ? { ...job, statement: timed(job.statement, caller) } : job;
          },
        }),
      );
      return writeRetrying((progress) =>
        using(caller.client, (held) => runChain(held, timedSteps, progress, failed)),
      );
    },
    call: (job, caller = GATEWAY) => {
      const limitMs = ownLimit(caller) ? anonymousMs : options.statementTimeoutMs;
      // The server's own limit is lifted for the call (0: none): MariaDB's would interrupt only
      // the statement running inside the routine, which then goes on. call.ts's timer kills the
      // connection at the caller's limit instead.
      const flavour = switcher.backend.server.flavour;
      const unlimited = withTimeLimit(flavour, job.statements.call, 0);
      const run: CallJob = { ...job, statements: { ...job.statements, call: unlimited } };
      return callRetrying(
        (progress) =>
          new Promise<CallResult>((resolve, reject) => {
            borrow(caller.client, (error, held, backend) => {
              if (held === undefined || backend === undefined) {
                reject(error);
                return;
              }
              backend.watchdog.watch(held);
              const callOptions = {
                limitMs,
                maxChars: MAX_ROUTINE_RESULT_CHARS,
                kill: () => backend.end(held.threadId),
                progress,
              };
              runCall(held, run, callOptions).then(
                ({ result, drop }) => {
                  backend.watchdog.release(held);
                  backend.acquirer.giveBack(held, drop);
                  resolve(result);
                },
                (failure: unknown) => {
                  backend.watchdog.release(held);
                  report(backend, failure);
                  backend.acquirer.giveBack(held, true);
                  reject(failure);
                },
              );
            });
          }),
      );
    },
    ping: (fresh) => switcher.backend.ping(fresh),
    stats: () => switcher.backend.acquirer.stats(),
    takenBack: () => switcher.backend.acquirer.takenBackCount(),
    close: () => switcher.close(),
  };
}
