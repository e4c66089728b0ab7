/**
 * A private MariaDB/MySQL server in a temporary directory on a free port, started from the
 * binaries on the PATH. Used by the tests when no server answers, by `tablegate demo`, and by
 * reliability drills that must kill and restart a server. Root has an empty password; only
 * 127.0.0.1 is bound. A sentinel (below) kills the server and deletes its directory if the
 * process that started it dies without cleaning up, even by SIGKILL.
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

/**
 * The sentinel makes the server die with the process that started it, whatever ends that
 * process — SIGKILL and crashes included, where no handler of ours runs. A small `sh` watches a
 * pipe from us: the kernel closes the pipe when we die, and the sentinel then kills the server it
 * was told about and deletes the temporary directory. (It lives in this file because Jest's
 * global setup loads this module without the module mapper, so it cannot import a sibling.)
 *
 * $1 is the directory. Lines on stdin: a pid (the server now running), `-` (none is running),
 * `release` (we cleaned up ourselves: exit quietly). End of input without `release`: our parent
 * is gone. The wait for the killed server is bounded, in case nobody reaps it.
 */
const SCRIPT = `
dir=$1
pid=
while read -r line; do
  case $line in
    release) exit 0 ;;
    -) pid= ;;
    *) pid=$line ;;
  esac
done
if [ -n "$pid" ]; then
  kill -KILL "$pid" 2>/dev/null
  tries=0
  while kill -0 "$pid" 2>/dev/null && [ $tries -lt 50 ]; do sleep 0.1; tries=$((tries + 1)); done
fi
rm -rf -- "$dir"
`;

interface Sentinel {
  /** The server process now running in the directory (null: none). */
  watch(pid: number | null): void;
  /** We stopped the server and deleted the directory ourselves: the sentinel just exits. */
  release(): void;
}

function startSentinel(dir: string): Sentinel {
  const child: ChildProcess = spawn('/bin/sh', ['-c', SCRIPT, 'tablegate-sentinel', dir], {
    stdio: ['pipe', 'ignore', 'ignore'],
    // Its own process group: a Ctrl-C meant for us must not end it before our own clean-up.
    detached: true,
  });
  // It must not keep our event loop alive, nor crash us if it is gone already.
  child.unref();
  child.on('error', () => {});
  child.stdin?.on('error', () => {});
  const send = (line: string) => {
    if (child.stdin?.writable) child.stdin.write(`${line}\n`);
  };
  return {
    watch: (pid) => send(pid === null ? '-' : String(pid)),
    release: () => {
      send('release');
      child.stdin?.end();
    },
  };
}

export interface PrivateServer {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly dataDir: string;
  /** The temporary directory that holds dataDir and is deleted with the server. */
  readonly dir: string;
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

/**
 * The server options that turn the binary log on as the change feed needs it (docs/changes.md):
 * row events with full images. Give them as `serverArgs`; `serverId` tells replicas apart.
 */
export function binlogArgs(serverId = 1): string[] {
  return [
    '--log-bin=binlog',
    '--binlog-format=ROW',
    '--binlog-row-image=FULL',
    `--server-id=${serverId}`,
  ];
}

/** `serverArgs` go to the server after ours (a drill's Galera settings, for one). */
export async function startPrivateServer(
  binary: ServerBinary | null = findServerBinary(),
  serverArgs: readonly string[] = [],
): Promise<PrivateServer> {
  if (!binary) {
    throw new Error('no mariadbd or mysqld found on the PATH (apt-get install mariadb-server)');
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-mysql-'));
  const sentinel = startSentinel(dir);
  try {
    return await startIn(dir, binary, sentinel, serverArgs);
  } catch (error) {
    // Nothing of a server that did not start stays behind.
    await rm(dir, { recursive: true, force: true });
    sentinel.release();
    throw error;
  }
}

async function startIn(
  dir: string,
  binary: ServerBinary,
  sentinel: Sentinel,
  serverArgs: readonly string[],
): Promise<PrivateServer> {
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
      // Installs side by side collide on their temporary tables in a shared /tmp.
      `--tmpdir=${dir}`,
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
    ...serverArgs,
  ];
  let child: ChildProcess;
  const launch = async () => {
    const server = spawn(binary.server, args, { stdio: 'ignore' });
    child = server;
    if (server.pid !== undefined) sentinel.watch(server.pid);
    server.once('exit', () => sentinel.watch(null));
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
    dir,
    stop: () => stopWith('SIGTERM'),
    kill: () => stopWith('SIGKILL'),
    restart: launch,
    destroy: async () => {
      await stopWith('SIGTERM');
      await rm(dir, { recursive: true, force: true });
      sentinel.release();
    },
  };
}
