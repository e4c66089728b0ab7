/**
 * `tablegate demo`: the example shop (docker/initdb/01-example.sql, the one copy that
 * docker-compose also loads) served in auth mode with a demo user, ready for curl and /docs.
 * Without database flags it runs on a private MariaDB/MySQL server started from the PATH in a
 * temporary directory, which stop() deletes (and the server's sentinel, if this process is killed
 * outright); with -h -u -p -P -D it loads the example into that database, only if the database has
 * no tables. Everything it starts, stop() stops, in reverse.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { parseCredentials, UserStore } from '../auth/users.js';
import type { FeedStatus } from '../changes/hub.js';
import { configFromRun, type RawFlags, UsageError } from '../cli/options.js';
import type { Config } from '../config.js';
import { reasonOf } from '../db/errors.js';
import { allHosts, hostLabel, hostsLabel } from '../db/pool.js';
import { type Gateway, openGateway, StartupError } from '../main.js';
import { DEMO_IMAGE, type DemoContainer, dockerAnswers, startContainer } from './container.js';
import {
  binlogArgs,
  findServerBinary,
  type PrivateServer,
  type ServerBinary,
  startPrivateServer,
} from './private-server.js';

export const DEMO_DATABASE = 'tablegate_demo';
export const DEMO_EMAIL = 'demo@tablegate.dev';
export const DEMO_PORT = '8080';
export const EXAMPLE_SQL = new URL('../../docker/initdb/01-example.sql', import.meta.url);

/** Neither a server binary nor a Docker engine: what to install, in one line. */
export const NO_SERVER =
  'no mariadbd or mysqld on the PATH (or in /usr/sbin) and no Docker engine answers: install MariaDB (apt install mariadb-server, brew install mariadb) or Docker, or give your own database with -h -u -p -P -D';

/** A reason the demo cannot start, said in one line (exit code 1). */
export class DemoError extends Error {
  override readonly name = 'DemoError';
}

/** Ctrl-C arrived while the demo was starting; stop() cleans up. */
export class DemoInterrupted extends Error {
  override readonly name = 'DemoInterrupted';
}

/** The flags that name a database of the user's own. */
const DATABASE_FLAGS = ['host', 'user', 'password', 'port', 'database'] as const;

export interface DemoSettings {
  readonly config: Config;
  /** True with -h -u -p -P -D: the example goes into that database, no private server. */
  readonly ownDatabase: boolean;
}

/**
 * argv and environment → the demo's configuration (throws UsageError). Auth mode always; by
 * default it listens on 127.0.0.1:8080 (the demo user's password is printed), logs warnings only
 * (the request lines would bury the instructions), and keeps uploads and the JWT secret in its
 * temporary directory when it runs its own server.
 */
export function demoSettings(
  words: readonly string[],
  flags: RawFlags,
  env: NodeJS.ProcessEnv,
): DemoSettings {
  if (words.length > 0) throw new UsageError(`unexpected argument '${words[0]}' after 'demo'`);
  const ownDatabase = DATABASE_FLAGS.some((name) => flags[name] !== undefined);
  const placeholders = ownDatabase
    ? {}
    : { host: '127.0.0.1', user: 'root', password: '', port: '3306', database: DEMO_DATABASE };
  const config = configFromRun(
    ['auth'],
    {
      ...flags,
      ...placeholders,
      listen: flags.listen ?? env.TABLEGATE_LISTEN_PORT ?? DEMO_PORT,
      listenHost: flags.listenHost ?? env.TABLEGATE_LISTEN_HOST ?? '127.0.0.1',
      logLevel: flags.logLevel ?? env.TABLEGATE_LOG_LEVEL ?? 'warn',
    },
    { ...env, TABLEGATE_AUTH: undefined },
  );
  return { config, ownDatabase };
}

/** Fails early, before a server is started for nothing, when the HTTP port is taken. */
function checkPortFree(port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new DemoError(
              `port ${port} is already in use on ${host}: choose another with -o <port>`,
            )
          : new DemoError(`cannot listen on ${host}:${port}: ${error.message}`),
      ),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

export interface DemoInfo {
  readonly url: string;
  readonly docsUrl: string;
  readonly email: string;
  readonly password: string;
  readonly database: string;
  /** `MariaDB 10.11.6 (private server)` or `MySQL 8.4.0 at db:3306`. */
  readonly server: string;
  readonly tables: number;
  readonly views: number;
  /** The private server's temporary directory (the demo's files are inside); empty with an own database. */
  readonly temporary: readonly string[];
  /** True when the database runs in a Docker container (no mariadbd or mysqld here). */
  readonly inContainer: boolean;
  /** The change feed: on, or off and why (an own database without a binary log, say). */
  readonly feed: FeedStatus;
}

export interface DemoDependencies {
  /** Where the server binary is looked for (tests look where there is none). */
  readonly findServer?: () => ServerBinary | null;
  /** Whether a Docker engine answers, asked only when no server binary is found. */
  readonly dockerAnswers?: () => Promise<boolean>;
}

export class Demo {
  private readonly cleanups: (() => Promise<unknown>)[] = [];
  private starting: Promise<DemoInfo> | null = null;
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly settings: DemoSettings,
    private readonly dependencies: DemoDependencies = {},
  ) {}

  start(): Promise<DemoInfo> {
    this.starting ??= this.run();
    return this.starting;
  }

  /** Stops whatever was started (waiting for a step under way), in reverse order. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.starting?.catch(() => {});
      for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup().catch(() => {});
    })();
    return this.stopping;
  }

  /** Each step of run() ends here: Ctrl-C during start-up stops after the step under way. */
  private checkpoint(): void {
    if (this.stopping) throw new DemoInterrupted('interrupted');
  }

  private async run(): Promise<DemoInfo> {
    const { config: given, ownDatabase } = this.settings;
    await checkPortFree(given.listenPort, given.listenHost);
    const temporary: string[] = [];
    let config = given;
    let serverName: string;
    let inContainer = false;
    if (ownDatabase) {
      serverName = `at ${hostsLabel(given.db)}`;
    } else {
      const binary = (this.dependencies.findServer ?? (() => findServerBinary()))();
      let host: string;
      let port: number;
      let own: string;
      if (binary) {
        let server: PrivateServer;
        try {
          // The binary log on, so that the change feed is on in the demo (docs/changes.md).
          server = await startPrivateServer(binary, binlogArgs());
        } catch (error) {
          throw new DemoError(`cannot start ${binary.server}: ${reasonOf(error)}`);
        }
        this.cleanups.push(() => server.destroy());
        // Inside the server's directory, so that whatever deletes that (a clean stop, or the
        // sentinel when this process is killed outright) deletes the demo's files too.
        temporary.push(server.dir);
        this.checkpoint();
        ({ host, port } = server);
        own = path.join(server.dir, 'demo');
        await mkdir(own, { mode: 0o700 });
        serverName = '(private server, deleted on exit)';
      } else {
        if (!(await (this.dependencies.dockerAnswers ?? dockerAnswers)())) {
          throw new DemoError(NO_SERVER);
        }
        this.checkpoint();
        own = await mkdtemp(path.join(os.tmpdir(), 'tablegate-demo-'));
        this.cleanups.push(() => rm(own, { recursive: true, force: true }));
        temporary.push(own);
        let container: DemoContainer;
        try {
          container = await startContainer(() => this.stopping !== null);
        } catch (error) {
          this.checkpoint();
          throw new DemoError(`cannot start a ${DEMO_IMAGE} container: ${reasonOf(error)}`);
        }
        this.cleanups.push(() => container.destroy());
        this.checkpoint();
        ({ host, port } = container);
        inContainer = true;
        serverName = `(Docker container ${container.id.slice(0, 12)} of ${DEMO_IMAGE}, removed on exit)`;
      }
      config = {
        ...given,
        db: { ...given.db, host, port, user: 'root', password: '' },
        jwtSecret: given.jwtSecret ?? randomBytes(32).toString('base64url'),
        stateDir: path.join(own, 'state'),
        // An --uploads-dir of the user's own stays where it is.
        uploadsDir:
          given.uploadsDir === path.join(given.stateDir, 'uploads')
            ? path.join(own, 'uploads')
            : given.uploadsDir,
      };
    }
    const loaded = await this.loadExample(config);
    this.checkpoint();
    let gateway: Gateway;
    try {
      gateway = await openGateway(config);
    } catch (error) {
      if (error instanceof StartupError) throw new DemoError(error.message);
      throw error;
    }
    this.cleanups.push(() => gateway.close());
    this.checkpoint();
    // The same code as POST /auth/register: argon2id hash in users_created_by_tablegate.
    const password = `demo-${randomBytes(6).toString('hex')}`;
    const users = await UserStore.open(gateway.db);
    await users.register(parseCredentials({ email: DEMO_EMAIL, password }));
    this.checkpoint();
    return {
      url: gateway.url,
      docsUrl: `${gateway.url}/docs`,
      email: DEMO_EMAIL,
      password,
      database: config.db.database,
      server: `${loaded.version} ${serverName}`,
      tables: loaded.tables,
      views: loaded.views,
      temporary,
      inContainer,
      feed: gateway.feed.status,
    };
  }

  /** Creates the database if missing, refuses one with tables, runs the example SQL. */
  private async loadExample(
    config: Config,
  ): Promise<{ version: string; tables: number; views: number }> {
    const { user, password, database } = config.db;
    let sql: string;
    try {
      sql = await readFile(EXAMPLE_SQL, 'utf8');
    } catch (error) {
      throw new DemoError(
        `cannot read the example schema ${EXAMPLE_SQL.pathname}: ${reasonOf(error)}`,
      );
    }
    let connection: mysql.Connection | undefined;
    const failures: string[] = [];
    // `-h db1,db2`: the first host that answers, as the gateway will use.
    const hosts = allHosts(config.db);
    for (const { host, port } of hosts) {
      try {
        connection = await mysql.createConnection({
          host,
          port,
          user,
          password,
          multipleStatements: true,
          charset: 'utf8mb4_unicode_ci',
          connectTimeout: 5000,
        });
        break;
      } catch (error) {
        const reason = reasonOf(error);
        failures.push(hosts.length === 1 ? reason : `${hostLabel({ host, port })}: ${reason}`);
      }
    }
    if (!connection) {
      throw new DemoError(
        `cannot connect to MySQL at ${hostsLabel(config.db)} as ${user}: ${failures.join('; ')}`,
      );
    }
    try {
      const [[existing]] = await connection.query<mysql.RowDataPacket[]>(
        'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
        [database],
      );
      const count = Number(existing?.n ?? 0);
      if (count > 0) {
        throw new DemoError(
          `database ${database} already has ${count} table${count === 1 ? '' : 's'}: the demo loads its example only into an empty database`,
        );
      }
      const [[server]] = await connection.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
      const version = String(server?.v ?? '');
      const name = /mariadb/i.test(version) ? 'MariaDB' : 'MySQL';
      const quoted = `\`${database.replaceAll('`', '``')}\``;
      try {
        await connection.query(
          `CREATE DATABASE IF NOT EXISTS ${quoted} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`,
        );
        await connection.query(`USE ${quoted}`);
        // Reads exactly as written (TIMESTAMPs in UTC, like the gateway's sessions).
        await connection.query("SET time_zone = '+00:00'");
        await connection.query(sql);
      } catch (error) {
        throw new DemoError(`cannot load the example into ${database}: ${reasonOf(error)}`);
      }
      const [kinds] = await connection.query<mysql.RowDataPacket[]>(
        'SELECT TABLE_TYPE AS type, COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? GROUP BY TABLE_TYPE',
        [database],
      );
      const countOf = (view: boolean) =>
        kinds
          .filter((k) => String(k.type).toUpperCase().includes('VIEW') === view)
          .reduce((sum, k) => sum + Number(k.n), 0);
      return {
        version: `${name} ${version.split('-')[0]}`,
        tables: countOf(false),
        views: countOf(true),
      };
    } finally {
      await connection.end().catch(() => {});
    }
  }
}

/**
 * The demo's instructions: where it listens, how to log in, commands that work as printed in one
 * terminal. With the change feed on, a stream of the products table is followed in the background
 * before the create, so the create's answer is followed by its `insert` event.
 */
export function demoBanner(info: DemoInfo): string {
  const { url, email, password, feed } = info;
  const credentials = JSON.stringify({ email, password });
  const row = JSON.stringify({ name: 'Oolong tea, 50 g', category: 'tea', price: 8.4, stock: 25 });
  const what = `${info.tables} tables and ${info.views} view${info.views === 1 ? '' : 's'}`;
  const bearer = '-H "Authorization: Bearer $TOKEN"';
  return [
    `tablegate demo: database ${info.database} (${what}) on ${info.server}`,
    feed.on ? 'change feed: on' : `change feed: off (${feed.reason})`,
    '',
    `  API      ${url}`,
    `  Docs     ${info.docsUrl}   (log in there with POST /auth/login, or Authorize with a token)`,
    `  Login    ${email}  password ${password}`,
    '',
    'Try it (bash or zsh):',
    '',
    `  TOKEN=$(curl -s ${url}/auth/login -H 'Content-Type: application/json' -d '${credentials}' | sed -E 's/.*"token":"([^"]*)".*/\\1/')`,
    `  curl -s ${bearer} '${url}/table/products/read?$filter=price+lt+20+and+category+eq+%27tea%27&$orderby=price'`,
    ...(feed.on ? [`  curl -sN ${bearer} ${url}/table/products/changes &`] : []),
    `  curl -s ${bearer} -H 'Content-Type: application/json' -d '${row}' ${url}/table/products/create`,
    '',
    ...(feed.on
      ? [
          "The third follows the products table's changes in the background (kill %1 stops it):",
          'the create prints its answer, then the stream its insert event.',
          '',
        ]
      : []),
    info.inContainer
      ? "Ctrl-C stops the gateway, removes the container and deletes the demo's files."
      : info.temporary.length > 0
        ? 'Ctrl-C stops the gateway and the private server and deletes their files.'
        : 'Ctrl-C stops the gateway; the example stays in the database.',
    '',
  ].join('\n');
}
