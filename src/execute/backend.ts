/**
 * One host of `-h` (execute/database.ts uses the one in use): what the server is (detected on a
 * connection of its own, which also proves the login and that a Galera node can serve), its
 * statement pool and the fair turns that lend it (acquire.ts), two control connections for KILL
 * QUERY and health pings (so neither waits behind the pool it is checking or freeing), the
 * watchdog, and the ping that tells the host switch (hosts.ts) when the host may be gone.
 */
import mysql, { type Pool, type RowDataPacket } from 'mysql2';
import type { Pool as PromisePool } from 'mysql2/promise';
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
import { HEALTH_TIMEOUT_MS } from '../limits.js';
import { Acquirer } from './acquire.js';
import { type HostBackend, HostSwitch } from './hosts.js';
import { Watchdog } from './watchdog.js';

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
 * Everything of one host: the statement pool, the control connections for KILL QUERY and pings
 * (so neither waits behind the pool it is checking or freeing), the watchdog, and what the
 * server is. A ping without answer tells `unanswered`: the host may be gone (hosts.ts).
 */
export interface Backend extends HostBackend {
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
 * The hosts of `-h`, on the first that answers (rejecting with the driver's error when it cannot;
 * with several hosts, when none answers: NoHostAnswered).
 */
export async function openHosts(
  config: DbConfig,
  options: DatabaseOptions,
): Promise<HostSwitch<Backend>> {
  let hosts: HostSwitch<Backend> | undefined;
  // An unanswered ping needs no second one to confirm it.
  const unanswered = (backend: Backend) => hosts?.suspect(backend, true);
  hosts = await HostSwitch.start(allHosts(config), (host) =>
    openBackend(config, host, options, unanswered),
  );
  return hosts;
}
