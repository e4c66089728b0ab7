/**
 * The `tablegate` command as a user runs it (the built dist/cli.js): usage errors exit 2, start-up
 * failures exit 1 with one line and no stack trace, a good start prints one line, SIGTERM exits 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/demo/private-server.js';
import { CLI, connectionFlags } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testServer } from '../helpers/mysql-url.js';

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts the CLI and resolves once it printed its start-up line. */
function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; line: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => {
      stdout += d;
      const line = stdout.split('\n').find((l) => l.startsWith('tablegate listening'));
      if (line) resolve({ child, line });
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
}

const RUN_USAGE =
  'usage: tablegate run [auth] -h <host> -u <user> -p <password> -P <port> -D <database> -o <output_port>  (all options: tablegate --help)';
const DEMO_USAGE =
  'usage: tablegate demo [-o <output_port>] [-h <host> -u <user> -p <password> -P <port> -D <database>]  (all options: tablegate --help)';

/** Flags that parse; the usage error comes first, so nothing is contacted. */
const FAKE_DB = ['-h', 'x', '-u', 'u', '-p', '', '-P', '3306', '-D', 'd', '-o', '8080'];

const server = testServer();
let db: TestDatabase;
let home: string;

beforeAll(async () => {
  db = await createTestDatabase(
    'CREATE TABLE a (id INT PRIMARY KEY); CREATE TABLE b (id INT PRIMARY KEY)',
  );
  home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-home-'));
});
afterAll(async () => {
  await db.drop();
  await rm(home, { recursive: true, force: true });
});

function dbArgs(listen: number): string[] {
  return [...connectionFlags(db.name, server), '-o', String(listen)];
}

test('--help prints usage, where -h is the MySQL host', async () => {
  const { code, stdout } = await runCli(['--help']);
  expect(code).toBe(0);
  expect(stdout).toContain(
    'tablegate run auth -h <host> -u <user> -p <password> -P <port> -D <database> -o <output_port>',
  );
  expect(stdout).toContain('-h, --host <host>');
});

test.each([
  [[], 'tablegate: missing command: run, user, webhook or demo'],
  [['serve'], "tablegate: unknown command 'serve'"],
  [
    ['run', '-h', 'x', '-u', 'u', '-p', '', '-P', '3306', '-o', '8080'],
    'tablegate: missing required option -D/--database (or TABLEGATE_DB_NAME)',
  ],
  [
    ['run', '-h', 'x', '-u', 'u', '-p', '', '-P', 'port', '-D', 'd', '-o', '8080'],
    "tablegate: -P/--port must be a whole number from 1 to 65535, got 'port'",
  ],
  [
    ['run', ...FAKE_DB, '--max-read-cost', 'many'],
    "tablegate: --max-read-cost must be a whole number from 0 to 1000000000000, got 'many'",
  ],
  [['rnu'], "tablegate: unknown command 'rnu': did you mean 'run'?"],
  [
    ['run', 'auht', ...FAKE_DB],
    "tablegate: unexpected argument 'auht' after 'run': did you mean 'auth'?",
  ],
  [['run', '-h', 'a', '-h', 'b'], 'tablegate: --host is given more than once'],
])(
  'usage error %p: one line naming it, one usage line pointing at --help, exit 2',
  async (args, line) => {
    const { code, stderr } = await runCli(args);
    expect(code).toBe(2);
    expect(stderr).toBe(`${line}\n${RUN_USAGE}\n`);
  },
);

test.each([
  [
    ['run', '--databse', 'x'],
    'tablegate: unknown option --databse: did you mean --database?',
    RUN_USAGE,
  ],
  [['run', '--colour', 'red'], 'tablegate: unknown option --colour', RUN_USAGE],
  [
    ['run', '--listen-hots=::'],
    'tablegate: unknown option --listen-hots: did you mean --listen-host?',
    RUN_USAGE,
  ],
  [['run', '-x'], 'tablegate: unknown option -x', RUN_USAGE],
  [
    ['demo', '--lisen', '9000'],
    'tablegate: unknown option --lisen: did you mean --listen?',
    DEMO_USAGE,
  ],
])('an unknown option %p is a usage error in the same style', async (args, line, usage) => {
  const { code, stderr } = await runCli([...args, ...FAKE_DB]);
  expect(code).toBe(2);
  expect(stderr).toBe(`${line}\n${usage}\n`);
});

test('refused login: one line, exit 1, no stack trace', async () => {
  const port = await freePort();
  const args = [
    'run',
    '-h',
    server.host,
    '-u',
    'no_such_user_tg',
    '-p',
    'wrong',
    '-P',
    String(server.port),
    '-D',
    db.name,
    '-o',
    String(port),
  ];
  const { code, stderr } = await runCli(args, { HOME: home });
  expect(code).toBe(1);
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(stderr).toMatch(
    new RegExp(
      `^tablegate: cannot connect to MySQL at ${server.host}:${server.port} as no_such_user_tg: Access denied`,
    ),
  );
});

test('unreachable MySQL: one line, exit 1', async () => {
  const closed = await freePort();
  const args = [
    'run',
    '-h',
    '127.0.0.1',
    '-u',
    'root',
    '-p',
    '',
    '-P',
    String(closed),
    '-D',
    'x',
    '-o',
    String(await freePort()),
  ];
  const { code, stderr } = await runCli(args, { HOME: home });
  expect(code).toBe(1);
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(stderr).toContain(`tablegate: cannot connect to MySQL at 127.0.0.1:${closed} as root: `);
});

test('unreachable Redis (--redis-url) in auth mode: one line, exit 1, no password shown', async () => {
  const closed = await freePort();
  const args = ['run', 'auth', ...dbArgs(await freePort())];
  args.push(
    '--jwt-secret',
    'x'.repeat(32),
    '--redis-url',
    `redis://:hunter2@127.0.0.1:${closed}/0`,
  );
  const { code, stderr } = await runCli(args, { HOME: home });
  expect(code).toBe(1);
  expect(stderr).toBe(
    `tablegate: cannot connect to Redis at redis://:***@127.0.0.1:${closed}/0: connect ECONNREFUSED 127.0.0.1:${closed}\n`,
  );
});

test('--redis-url that is not a redis:// URL: usage error', async () => {
  const args = ['run', 'auth', ...dbArgs(await freePort()), '--redis-url', '127.0.0.1:6379'];
  const { code, stderr } = await runCli(args, { HOME: home });
  expect(code).toBe(2);
  expect(stderr).toContain(
    "tablegate: --redis-url must start with redis:// or rediss://, got '127.0.0.1:6379'",
  );
});

test('port in use: one line, exit 1', async () => {
  const blocker = net.createServer().listen(0, '0.0.0.0');
  await new Promise((r) => blocker.once('listening', r));
  const port = (blocker.address() as net.AddressInfo).port;
  try {
    const { code, stderr } = await runCli(['run', ...dbArgs(port)], { HOME: home });
    expect(code).toBe(1);
    expect(stderr).toBe(
      `tablegate: port ${port} is already in use on 0.0.0.0: choose another with -o <port>\n`,
    );
  } finally {
    blocker.close();
  }
});

test('starts from the environment alone, prints one line, creates ~/.tablegate/uploads, exits 0 on SIGTERM', async () => {
  const port = await freePort();
  const { child, line } = await startCli(['run'], {
    HOME: home,
    TABLEGATE_DB_HOST: server.host,
    TABLEGATE_DB_USER: server.user,
    TABLEGATE_DB_PASSWORD: server.password,
    TABLEGATE_DB_PORT: String(server.port),
    TABLEGATE_DB_NAME: db.name,
    TABLEGATE_LISTEN_PORT: String(port),
    TABLEGATE_LOG_LEVEL: 'warn',
  });
  const uploads = path.join(home, '.tablegate', 'uploads');
  expect(line).toBe(
    `tablegate listening on http://localhost:${port} (mode: open, database: ${db.name}, 2 tables, uploads: ${uploads}, policy: none, read consistency: eventual)`,
  );
  expect(existsSync(uploads)).toBe(true);
  const response = await fetch(`http://127.0.0.1:${port}/table/a/read`);
  expect(await response.json()).toEqual([]);
  const exit = new Promise((r) => child.on('exit', (code) => r(code)));
  child.kill('SIGTERM');
  expect(await exit).toBe(0);
});

test('at the default log level the start prints exactly one line, then one line per request', async () => {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'run', ...dbArgs(port)], {
    env: { PATH: process.env.PATH, HOME: home },
  });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const lines = () => stdout.split('\n').filter(Boolean);
  const waitFor = async (count: number) => {
    while (lines().length < count) await new Promise((r) => setTimeout(r, 50));
  };
  try {
    await waitFor(1);
    expect((await fetch(`http://127.0.0.1:${port}/table/a/read`)).status).toBe(200);
    await waitFor(2);
    const [first, second, ...rest] = lines();
    expect(first).toMatch(/^tablegate listening on http:\/\/localhost:\d+ \(mode: open, /);
    expect(JSON.parse(second as string)).toMatchObject({ msg: 'request', url: '/table/a/read' });
    expect(rest).toEqual([]);
  } finally {
    const exit = new Promise((r) => child.on('exit', r));
    child.kill('SIGTERM');
    await exit;
  }
});

test.each([
  [
    ['run', 'auth', ...FAKE_DB, '--token-ttl', 'forever'],
    "tablegate: --token-ttl must be a duration like 1h, 30m, 7d or 3600 (seconds), got 'forever'",
  ],
  [
    ['run', 'auth', ...FAKE_DB, '--jwt-secret', 'too-short'],
    'tablegate: --jwt-secret (or TABLEGATE_JWT_SECRET) must be at least 32 bytes; it is 9',
  ],
  [
    ['run', ...FAKE_DB, '--jwt-secret', 'x'.repeat(32)],
    "tablegate: --jwt-secret is for auth mode: run 'tablegate run auth …' (or set TABLEGATE_AUTH=true), or leave it out",
  ],
  [
    ['run', ...FAKE_DB, '--registration', 'closed'],
    "tablegate: --registration is for auth mode: run 'tablegate run auth …' (or set TABLEGATE_AUTH=true), or leave it out",
  ],
  [
    ['run', 'auth', ...FAKE_DB, '--jwks-url', 'https://sso.example.com/certs'],
    'tablegate: --jwt-issuer is required with --jwks-url: tokens are accepted only when their iss names it',
  ],
])('a malformed or misplaced auth option %p is a usage error: exit 2', async (args, line) => {
  const { code, stderr } = await runCli(args, { HOME: home });
  expect(code).toBe(2);
  expect(stderr).toBe(`${line}\n${RUN_USAGE}\n`);
});

test('a --jwt-public-key file that is not a public key: one line, exit 2', async () => {
  const keyFile = path.join(home, 'not-a-key.pem');
  await writeFile(keyFile, 'hello');
  const args = [
    'run',
    'auth',
    ...dbArgs(await freePort()),
    '--jwt-public-key',
    keyFile,
    '--jwt-issuer',
    'https://sso.example.com',
    '--jwt-audience',
    'shop',
  ];
  const { code, stderr } = await runCli(args, { HOME: home });
  expect(code).toBe(2);
  expect(stderr).toBe(
    `tablegate: --jwt-public-key ${keyFile}: not a PEM public key, a JWK or a JWK set\n`,
  );
});

test('auth mode with a policy warns at start about users whose role it does not define', async () => {
  const shop = await createTestDatabase(
    `CREATE TABLE a (id INT PRIMARY KEY);
     CREATE TABLE users_created_by_tablegate (
       id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, email VARCHAR(254) NOT NULL UNIQUE,
       password VARCHAR(255) NOT NULL, role VARCHAR(64) NOT NULL DEFAULT 'user',
       created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP);
     INSERT INTO users_created_by_tablegate (email, password, role) VALUES
       ('ann@example.com', 'x', 'user'), ('carol@example.com', 'x', 'admn'),
       ('dan@example.com', 'x', 'admn'), ('eve@example.com', 'x', 'guest');`,
  );
  const policy = path.join(home, 'warn-policy.json');
  await writeFile(
    policy,
    JSON.stringify({ roles: { user: { tables: { a: { read: true } } }, admin: {} } }),
  );
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      CLI,
      'run',
      'auth',
      ...connectionFlags(shop.name, server),
      '-o',
      String(port),
      '--policy',
      policy,
      '--log-level',
      'warn',
      '--jwt-secret',
      'w'.repeat(32),
    ],
    { env: { PATH: process.env.PATH, HOME: home } },
  );
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  try {
    while (!stdout.includes('tablegate listening')) {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const [warning, listening] = stdout.split('\n');
    expect(JSON.parse(warning as string)).toMatchObject({
      level: 40,
      roles: { admn: 2, guest: 1 },
      msg: "users have roles the policy does not define, so they may do nothing: 'admn' (2 users), 'guest' (1 user); fix them with 'tablegate user set-role'",
    });
    expect(listening).toMatch(/^tablegate listening on /);
  } finally {
    const exit = new Promise((r) => child.on('exit', r));
    child.kill('SIGTERM');
    await exit;
    await shop.drop();
  }
});
