/**
 * A private MariaDB/MySQL server in a temporary directory on a free port, started from the
 * binaries on the PATH. Used by the tests when no server answers, by `tablegate demo`, and by
 * reliability drills that must kill and restart a server. Root has an empty password; only
 * 127.0.0.1 is bound.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';

const run = promisify(execFile);

export interface PrivateServer {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly dataDir: string;
  /** Stops the server (SIGTERM) and keeps its data directory. */
  stop(): Promise<void>;
  /** Kills it at once, like a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data directory. */
  restart(): Promise<void>;
  /** Stops it and deletes everything it wrote. */
  destroy(): Promise<void>;
}

const SEARCH_DIRS = [
  '/usr/sbin',
  '/usr/local/sbin',
  '/usr/bin',
  '/usr/local/bin',
  '/usr/local/mysql/bin',
];

export interface ServerBinary {
  readonly server: string;
  readonly flavour: 'mariadb' | 'mysql';
}

/**
 * The first server binary on the PATH (or in the usual sbin directories), or null. Both places
 * are parameters so a test can look where there is none.
 */
export function findServerBinary(
  searchPath: string = process.env.PATH ?? '',
  extraDirs: readonly string[] = SEARCH_DIRS,
): ServerBinary | null {
  const dirs = [...searchPath.split(path.delimiter), ...extraDirs].filter(Boolean);
  for (const [name, flavour] of [
    ['mariadbd', 'mariadb'],
    ['mysqld', 'mysql'],
  ] as const) {
    for (const dir of dirs) {
      const candidate = path.join(dir, name);
      if (existsSync(candidate)) return { server: candidate, flavour };
    }
  }
  return null;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function waitForServer(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`database server exited with code ${child.exitCode}`);
    try {
      const connection = await mysql.createConnection({
        host: '127.0.0.1',
        port,
        user: 'root',
        password: '',
      });
      await connection.end();
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`database server did not answer within ${timeoutMs} ms: ${String(lastError)}`);
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startPrivateServer(
  binary: ServerBinary | null = findServerBinary(),
): Promise<PrivateServer> {
  if (!binary) {
    throw new Error('no mariadbd or mysqld found on the PATH (apt-get install mariadb-server)');
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-mysql-'));
  try {
    return await startIn(dir, binary);
  } catch (error) {
    // Nothing of a server that did not start stays behind.
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function startIn(dir: string, binary: ServerBinary): Promise<PrivateServer> {
  const dataDir = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const userArgs = asRoot ? ['--user=root'] : [];
  if (binary.flavour === 'mariadb') {
    const installer = path.join(path.dirname(binary.server), '..', 'bin', 'mariadb-install-db');
    const installDb = existsSync(installer) ? installer : 'mariadb-install-db';
    await run(installDb, [
      '--no-defaults',
      `--datadir=${dataDir}`,
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      ...userArgs,
    ]);
  } else {
    await run(binary.server, [
      '--no-defaults',
      '--initialize-insecure',
      `--datadir=${dataDir}`,
      ...userArgs,
    ]);
  }
  const port = await freePort();
  const args = [
    '--no-defaults',
    `--datadir=${dataDir}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${path.join(dir, 'mysql.sock')}`,
    `--pid-file=${path.join(dir, 'mysql.pid')}`,
    '--skip-name-resolve',
    '--innodb-buffer-pool-size=64M',
    ...(binary.flavour === 'mysql' ? ['--mysqlx=OFF'] : []),
    ...userArgs,
  ];
  let child: ChildProcess;
  const launch = async () => {
    child = spawn(binary.server, args, { stdio: 'ignore' });
    try {
      await waitForServer(port, child, 30_000);
    } catch (error) {
      child.kill('SIGKILL');
      await exited(child);
      throw error;
    }
  };
  await launch();
  const stopWith = async (signal: NodeJS.Signals) => {
    child.kill(signal);
    await exited(child);
  };
  return {
    host: '127.0.0.1',
    port,
    user: 'root',
    password: '',
    dataDir,
    stop: () => stopWith('SIGTERM'),
    kill: () => stopWith('SIGKILL'),
    restart: launch,
    destroy: async () => {
      await stopWith('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}
