/**
 * The servers under test and how each is installed and started: tablegate (the built
 * dist/cli.js), the floor (bench/floor-server.mjs), and xmysql and mysql-rest installed from the
 * npm registry into the run's temporary folder. All serve the bench database as the bench user,
 * on 127.0.0.1, with 10 MySQL connections and, where the tool allows, no access log.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DB } from './database.mjs';
import { runToEnd, startChild, stopChild, tail } from './processes.mjs';
import { authDialect } from './scenarios.mjs';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = process.env.BENCH_TABLEGATE_CLI ?? path.join(REPO, 'dist', 'cli.js');
export const FLOOR = path.join(REPO, 'bench', 'floor-server.mjs');

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `url` until it answers 200; fails early if the child exits. */
async function waitReady(url, child, logFile, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`exited (${child.signalCode ?? child.exitCode}): ${tail(logFile)}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {}
    await sleep(200);
  }
  throw new Error(`not ready after ${timeoutMs / 1000} s: ${tail(logFile)}`);
}

/**
 * The environment without what `npm run` adds about this project (npm_package_*, the project as
 * local prefix…) and without the user's TABLEGATE_* settings. The user's npm configuration
 * (registry, CA file, proxy) stays, so that the installs work behind a mirror.
 */
export function cleanEnv(extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    const drop =
      /^(npm_package_|npm_lifecycle_|TABLEGATE_)/i.test(key) ||
      /^npm_config_(local_prefix|call)$/i.test(key);
    if (!drop) env[key] = value;
  }
  return { ...env, ...extra };
}

/** `npm install --prefix <dir> <name>`; returns the installed version. */
export async function installTool(name, tmp) {
  const prefix = path.join(tmp, 'tools', name);
  mkdirSync(prefix, { recursive: true });
  const logFile = path.join(tmp, `npm-install-${name}.log`);
  try {
    await runToEnd(
      'npm',
      ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=error', name],
      { cwd: prefix, env: cleanEnv(), logFile },
    );
  } catch {
    const log = tail(logFile, 40).split('\n');
    const reason = log.find((line) => /npm error (code|notarget|engine|404)/i.test(line)) ?? log[0];
    throw new Error(`npm install ${name} failed: ${reason.trim()}`);
  }
  const pkg = JSON.parse(
    readFileSync(path.join(prefix, 'node_modules', name, 'package.json'), 'utf8'),
  );
  return { version: pkg.version, bin: path.join(prefix, 'node_modules', name, 'bin', 'index.js') };
}

/**
 * Definitions: `start({ db, tmp, poolSize, tools })` resolves to a running server handle
 * `{ key, label, base, pid, child, logFile, filesDir }`.
 */
/**
 * What `tablegate-policy` runs under (docs/policies.md): open mode, every request `anonymous`,
 * every action granted, and `items` read under a row condition ANDed into every read. It holds for
 * every bench row (no quantity is negative), so the answers are those of plain tablegate, and it
 * leaves MySQL's access path as it was (primary key, `Using where`), so the difference is the
 * policy's own cost: the gate, the policy stage and the longer WHERE. (A condition on the
 * primary key, `id ge 1`, turns MariaDB's index scan into a range scan: that cost is the
 * condition's, not the policy's.)
 */
export const BENCH_POLICY = {
  roles: {
    anonymous: {
      tables: {
        '*': { read: true, create: true, update: true, delete: true },
        items: { read: { where: 'qty ge 0' } },
      },
      files: { upload: true, download: true },
    },
  },
};

/** The HS256 secret of the auth-mode servers of scenario (h), fresh for every run. */
const BENCH_JWT_SECRET = randomBytes(32).toString('base64url');

/** A token as tablegate signs them (auth/tokens.ts), for the floor's check. */
function benchToken() {
  const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: '1', email: 'bench@example.com', role: 'user', iat: now, exp: now + 3600 })}`;
  const signature = createHmac('sha256', BENCH_JWT_SECRET).update(unsigned).digest('base64url');
  return `${unsigned}.${signature}`;
}

export const SERVERS = [
  {
    key: 'tablegate',
    label: 'tablegate',
    async start({
      db,
      tmp,
      poolSize,
      extraNodeArgs = [],
      cwd = tmp,
      cli = CLI,
      key = 'tablegate',
      extraArgs = [],
      mode = [],
      extraEnv = {},
    }) {
      const port = await freePort();
      const filesDir = path.join(tmp, 'files', key);
      mkdirSync(filesDir, { recursive: true });
      const args = [
        ...extraNodeArgs,
        cli,
        'run',
        ...mode,
        '-h',
        db.host,
        '-u',
        db.user,
        '-P',
        String(db.port),
        '-D',
        BENCH_DB,
        '-o',
        String(port),
        '--listen-host',
        '127.0.0.1',
        '--log-level',
        'warn',
        '--pool-size',
        String(poolSize),
        '--uploads-dir',
        filesDir,
        '--max-file-size',
        '4GiB',
        ...extraArgs,
      ];
      // The password goes through the environment, not the process list (docs/configuration.md).
      // The load generator is one client address with many connections: no per-client cap, as
      // in a default deployment (where the pool is shared fairly between addresses instead);
      // said outright for builds from before that, whose default of 8 is below BENCH_CONNECTIONS
      // (an environment variable, which an older build ignores).
      const env = cleanEnv({
        TABLEGATE_DB_PASSWORD: db.password,
        TABLEGATE_MAX_CLIENT_REQUESTS: '0',
        ...extraEnv,
      });
      return launch(key, process.execPath, args, { cwd, env, tmp, port, filesDir }, '/health');
    },
  },
  {
    key: 'tablegate-policy',
    label: 'tablegate --policy',
    start(options) {
      const file = path.join(options.tmp, 'bench-policy.json');
      writeFileSync(file, JSON.stringify(BENCH_POLICY));
      return SERVERS[0].start({
        ...options,
        key: 'tablegate-policy',
        extraArgs: ['--policy', file],
      });
    },
  },
  {
    key: 'floor',
    label: 'floor (node:http + mysql2)',
    async start({
      db,
      tmp,
      poolSize,
      extraNodeArgs = [],
      cwd = tmp,
      key = 'floor',
      extraEnv = {},
    }) {
      const port = await freePort();
      const filesDir = path.join(tmp, 'files', key);
      mkdirSync(filesDir, { recursive: true });
      const env = cleanEnv({
        FLOOR_PORT: String(port),
        FLOOR_HOST: '127.0.0.1',
        FLOOR_DB_HOST: db.host,
        FLOOR_DB_PORT: String(db.port),
        FLOOR_DB_USER: db.user,
        FLOOR_DB_PASSWORD: db.password,
        FLOOR_DB_NAME: BENCH_DB,
        FLOOR_POOL_SIZE: String(poolSize),
        FLOOR_UPLOADS_DIR: filesDir,
        ...extraEnv,
      });
      return launch(
        key,
        process.execPath,
        [...extraNodeArgs, FLOOR],
        { cwd, env, tmp, port, filesDir },
        '/health',
      );
    },
  },
  {
    key: 'tablegate-auth',
    label: 'tablegate run auth',
    authMode: true,
    async start(options) {
      const server = await SERVERS[0].start({
        ...options,
        // ab-cpu.mjs runs two of them (A-auth, B-auth), each with its own log and files.
        key: options.key ?? 'tablegate-auth',
        mode: ['auth'],
        extraEnv: { TABLEGATE_JWT_SECRET: BENCH_JWT_SECRET },
      });
      // A real user and a real login: every request of (h) carries this token.
      const credentials = { email: 'bench@example.com', password: 'bench password 17' };
      const send = (route) =>
        fetch(server.base + route, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(credentials),
        });
      await send('/auth/register').then((response) => response.arrayBuffer());
      const login = await send('/auth/login').then((response) => response.json());
      if (typeof login.token !== 'string')
        throw new Error(`login failed: ${JSON.stringify(login)}`);
      return { ...server, dialect: authDialect(login.token) };
    },
  },
  {
    key: 'floor-auth',
    label: 'floor + token check',
    authMode: true,
    async start(options) {
      const server = await SERVERS.find((s) => s.key === 'floor').start({
        ...options,
        key: 'floor-auth',
        extraEnv: { FLOOR_JWT_SECRET: BENCH_JWT_SECRET },
      });
      return { ...server, dialect: authDialect(benchToken()) };
    },
  },
  {
    key: 'xmysql',
    label: 'xmysql',
    npm: 'xmysql',
    async start({ db, tmp, tools }) {
      const port = await freePort();
      // Its uploads land in its working directory.
      const filesDir = path.join(tmp, 'files', 'xmysql');
      mkdirSync(filesDir, { recursive: true });
      // No option for the pool (it is fixed at 10) nor for its morgan access log, which goes to
      // the log file. -p must not be empty; the bench user's password never is.
      const args = [
        tools.xmysql.bin,
        '-h',
        db.host,
        '-o',
        String(db.port),
        '-u',
        db.user,
        '-p',
        db.password,
        '-d',
        BENCH_DB,
        '-n',
        String(port),
        '-r',
        '127.0.0.1',
      ];
      return launch(
        'xmysql',
        process.execPath,
        args,
        { cwd: filesDir, env: cleanEnv(), tmp, port, filesDir },
        '/_health',
      );
    },
  },
  {
    key: 'mysql-rest',
    label: 'mysql-rest',
    npm: 'mysql-rest',
    async start({ db, tmp, poolSize, tools }) {
      const port = await freePort();
      const filesDir = path.join(tmp, 'files', 'mysql-rest');
      mkdirSync(filesDir, { recursive: true });
      const args = [
        tools['mysql-rest'].bin,
        '-h',
        db.host,
        '-o',
        String(db.port),
        '-u',
        db.user,
        '-p',
        db.password,
        '-n',
        String(port),
        '-r',
        '127.0.0.1',
        '--mysqlDatabase',
        BENCH_DB,
        '--mysqlConnectionLimit',
        String(poolSize),
        '--disableAccessLog',
      ];
      return launch(
        'mysql-rest',
        process.execPath,
        args,
        { cwd: filesDir, env: cleanEnv(), tmp, port, filesDir },
        '/_health',
      );
    },
  },
];

export async function launch(key, command, args, { cwd, env, tmp, port, filesDir }, readyPath) {
  const logFile = path.join(tmp, `${key}.log`);
  const child = startChild(command, args, { cwd, env, logFile });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(base + readyPath, child, logFile);
  } catch (error) {
    await stopChild(child, 'SIGKILL');
    throw error;
  }
  return { key, base, pid: child.pid, child, logFile, filesDir };
}
