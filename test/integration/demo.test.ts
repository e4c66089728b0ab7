/**
 * `tablegate demo` as a user runs it (the built dist/cli.js): on a private server it serves
 * with the change feed on (how soon is printed; bench/ measures it), the printed commands work as printed (typed into bash
 * with curl, and their equivalents with fetch: the create arrives on the printed stream), SIGINT
 * exits 0 and leaves no temporary file and no server behind.
 * With -h -u -p -P -D it loads the example into an empty database and refuses one with tables;
 * without a server binary, or with the port taken, it says so in one line.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { RowDataPacket } from 'mysql2/promise';
import { parse } from 'yaml';
import { DEMO_IMAGE } from '../../src/demo/container.js';
import { Demo, DemoError, demoSettings, NO_SERVER } from '../../src/demo/demo.js';
import { findServerBinary, freePort } from '../../src/demo/private-server.js';
import { CLI, connectionFlags } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testServer } from '../helpers/mysql-url.js';
import { testIf } from '../helpers/skip.js';

/** How long a test waits for the banner before it fails: generous, not a measurement. */
const BANNER_GIVE_UP_MS = 45_000;
const HAS_SERVER = findServerBinary() !== null;
const HAS_CURL = spawnSync('curl', ['--version']).status === 0;

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * A machine without mariadbd or mysqld: the demo runs in a mount namespace (`unshare -m`, as
 * root) where an empty tmpfs covers /usr/sbin, with only node's directory on the PATH.
 */
const HIDE_SERVER = [
  'unshare',
  '-m',
  'sh',
  '-c',
  'mount -t tmpfs none /usr/sbin && exec "$@"',
  'sh',
];
const NO_SERVER_PATH = path.dirname(process.execPath);
const CAN_HIDE_SERVER =
  spawnSync(
    HIDE_SERVER[0] as string,
    [
      ...HIDE_SERVER.slice(1),
      process.execPath,
      '--input-type=module',
      '-e',
      `import { findServerBinary } from '${path.resolve('dist/demo/private-server.js')}'; process.exit(findServerBinary() === null ? 0 : 1)`,
    ],
    { env: { PATH: NO_SERVER_PATH } },
  ).status === 0;

function spawnDemo(args: string[], env: NodeJS.ProcessEnv, hideServer = false): Running {
  const argv = [process.execPath, CLI, 'demo', ...args];
  const [command, ...rest] = hideServer ? [...HIDE_SERVER, ...argv] : argv;
  const child = spawn(command as string, rest, {
    env: { PATH: hideServer ? NO_SERVER_PATH : process.env.PATH, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/**
 * After a failed assertion: SIGINT first, so the demo stops its private server (a SIGKILL would
 * leave mariadbd running), and SIGKILL only if it does not exit in time.
 */
async function ensureStopped(demo: Running): Promise<void> {
  if (demo.child.exitCode !== null || demo.child.signalCode !== null) return;
  demo.child.kill('SIGINT');
  const timeout = new Promise((resolve) => setTimeout(resolve, 15_000));
  if ((await Promise.race([demo.exited.then(() => 'exited'), timeout])) !== 'exited') {
    demo.child.kill('SIGKILL');
  }
}

/** Resolves with the banner once the demo printed its last line; rejects if it exits first. */
async function banner(demo: Running, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (demo.stdout().includes('Ctrl-C')) return demo.stdout();
    if (demo.child.exitCode !== null) {
      throw new Error(`demo exited ${demo.child.exitCode}: ${demo.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `no banner within ${timeoutMs} ms; stdout: ${demo.stdout()} stderr: ${demo.stderr()}`,
  );
}

/** The printed command lines: login (sets TOKEN), filtered read, stream (when on), create. */
function commands(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('TOKEN=$(curl') || line.startsWith('curl '));
}

/** The `data:` of the first event named `name` on an event stream, parsed. */
async function firstEvent(body: ReadableStream<Uint8Array>, name: string): Promise<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended before an ${name} event: ${text}`);
    text += decoder.decode(value, { stream: true });
    const event = new RegExp(`^event: ${name}\ndata: (.*)\n\n`, 'm').exec(text);
    if (event) {
      await reader.cancel();
      return JSON.parse(event[1] as string);
    }
  }
}

/**
 * The same requests with fetch, taken apart from the printed commands; with a stream line, the
 * stream is open before the create, and its first insert event is returned.
 */
async function runWithFetch(
  lines: string[],
): Promise<{ read: unknown; created: unknown; streamed?: unknown }> {
  const login = lines[0] as string;
  const read = lines[1] as string;
  const stream = lines.find((line) => line.startsWith('curl -sN '));
  const create = lines[lines.length - 1] as string;
  const loginUrl = /curl -s (\S+)/.exec(login)?.[1] as string;
  const credentials = /-d '([^']+)'/.exec(login)?.[1] as string;
  const answer = await fetch(loginUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: credentials,
  });
  const { token } = (await answer.json()) as { token: string };
  const auth = { authorization: `Bearer ${token}` };
  const readUrl = /'(http[^']+)'/.exec(read)?.[1] as string;
  const rows = await (await fetch(readUrl, { headers: auth })).json();
  let events: Promise<unknown> | undefined;
  if (stream !== undefined) {
    const streamUrl = /(http\S+) &$/.exec(stream)?.[1] as string;
    const opened = await fetch(streamUrl, { headers: auth });
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    events = firstEvent(opened.body as ReadableStream<Uint8Array>, 'insert');
  }
  const body = /-d '([^']+)'/.exec(create)?.[1] as string;
  const createUrl = /(\S+)$/.exec(create)?.[1] as string;
  const created = await (
    await fetch(createUrl, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body,
    })
  ).json();
  return events === undefined
    ? { read: rows, created }
    : { read: rows, created, streamed: await events };
}

/**
 * The printed lines typed into bash one at a time, as a user pastes them: each waits for the
 * previous one's output (the stream's for its `retry:` line, so it listens before the create).
 * Resolves with everything bash printed once the stream's insert event is there.
 */
async function runInBash(lines: string[]): Promise<string> {
  const bash = spawn('bash', ['-s'], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  bash.stdout.on('data', (d) => (out += d));
  bash.stderr.on('data', (d) => (err += d));
  const until = async (seen: (text: string) => boolean, what: string) => {
    const deadline = Date.now() + 20_000;
    while (!seen(out)) {
      if (Date.now() > deadline || bash.exitCode !== null) {
        throw new Error(`bash: no ${what}; stdout: ${out} stderr: ${err}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  try {
    let answers = 0;
    for (const line of lines) {
      const streaming = line.startsWith('curl -sN ');
      // curl -s ends its output without a newline: the `echo` gives it one.
      bash.stdin.write(streaming ? `${line}\n` : `${line}\necho\necho '<done>'\n`);
      if (streaming) await until((text) => text.includes('retry: 2000'), 'retry: line');
      else {
        answers += 1;
        await until((text) => text.split('<done>').length > answers, `answer to ${line}`);
      }
    }
    await until((text) => /^event: insert\ndata: .*\n\n/m.test(text), 'insert event');
    expect(err).toBe('');
    return out;
  } finally {
    // The background stream with it: its process group.
    if (bash.pid !== undefined) process.kill(-bash.pid, 'SIGKILL');
  }
}

const TEA_UNDER_20 = [
  {
    id: 1,
    name: 'Green tea, 100 g',
    category: 'tea',
    price: 6.5,
    stock: 120,
    image_url: null,
  },
  {
    id: 2,
    name: 'Earl Grey tea, 250 g',
    category: 'tea',
    price: 12.9,
    stock: 40,
    image_url: null,
  },
];

let home: string;
let tmp: string;

beforeEach(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-demo-home-'));
  tmp = await mkdtemp(path.join(os.tmpdir(), 'tablegate-demo-tmp-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(tmp, { recursive: true, force: true });
});

testIf(HAS_SERVER, 'no mariadbd or mysqld on the PATH (apt-get install mariadb-server)')(
  'on a private server: serves, the printed commands work, SIGINT cleans up',
  async () => {
    const port = await freePort();
    const started = Date.now();
    const demo = spawnDemo(['-o', String(port)], { HOME: home, TMPDIR: tmp });
    try {
      const text = await banner(demo, BANNER_GIVE_UP_MS);
      // How fast it starts is measured by bench/ (a bound here only tells how busy the machine is).
      console.log(`demo: banner after ${Date.now() - started} ms`);
      expect(text).toMatch(/^tablegate demo: database tablegate_demo \(4 tables and 1 view\) on /);
      // The private server has the binary log on: the feed is on.
      expect(text.split('\n')[1]).toBe('change feed: on');
      expect(text).toContain(
        "The third follows the products table's changes in the background (kill %1 stops it):\nthe create prints its answer, then the stream its insert event.\n",
      );
      expect(text).toContain(`API      http://127.0.0.1:${port}\n`);
      expect(text).toContain(`Docs     http://127.0.0.1:${port}/docs`);
      expect(text).toMatch(/Login {4}demo@tablegate\.dev {2}password demo-[0-9a-f]{12}\n/);
      // Its temporary directory is in $TMPDIR while it runs; the demo's files are inside it.
      expect(await readdir(tmp)).toEqual([expect.stringMatching(/^tablegate-mysql-/)]);

      const lines = commands(text);
      expect(lines).toHaveLength(4);
      expect(lines[2]).toBe(
        `curl -sN -H "Authorization: Bearer $TOKEN" http://127.0.0.1:${port}/table/products/changes &`,
      );
      const viaFetch = await runWithFetch(lines);
      expect(viaFetch.read).toEqual(TEA_UNDER_20);
      expect(viaFetch.created).toEqual({
        success: true,
        message: 'Data inserted successfully',
        insertId: 6,
        affectedRows: 1,
      });
      const oolong = { id: 6, name: 'Oolong tea, 50 g', category: 'tea', price: 8.4, stock: 25 };
      // The create arrives on the stream as a read of the row answers it.
      expect(viaFetch.streamed).toEqual({
        op: 'insert',
        table: 'products',
        key: { id: 6 },
        row: { ...oolong, image_url: null },
        at: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        tx: expect.stringMatching(/^\d+-\d+-\d+$/),
      });
      if (HAS_CURL) {
        const printed = await runInBash(lines);
        const [read] = printed.split('\n').filter((line) => line.startsWith('['));
        // The stream, in the background, may print its event right after the create's answer
        // and before the newline that ends it: the answer is found in the text, not by line.
        const created = /\{"success":[^{}]*\}/.exec(printed)?.[0];
        // The fetch run has created the oolong already.
        expect(JSON.parse(read as string)).toEqual([
          TEA_UNDER_20[0],
          { ...oolong, image_url: null },
          TEA_UNDER_20[1],
        ]);
        expect(JSON.parse(created as string)).toMatchObject({ success: true, insertId: 7 });
        const event = /^event: insert\ndata: (.*)$/m.exec(printed)?.[1] as string;
        expect(JSON.parse(event)).toMatchObject({
          op: 'insert',
          key: { id: 7 },
          row: { ...oolong, id: 7, image_url: null },
        });
      } else {
        console.warn('curl not found: the printed commands were checked with fetch only');
      }
      // The docs page is there without a token.
      expect((await fetch(`http://127.0.0.1:${port}/docs`)).status).toBe(200);

      demo.child.kill('SIGINT');
      expect(await demo.exited).toBe(0);
      expect(await readdir(tmp)).toEqual([]);
      expect(spawnSync('pgrep', ['-f', tmp]).stdout.toString()).toBe('');
    } finally {
      await ensureStopped(demo);
    }
  },
  120_000,
);

testIf(HAS_SERVER, 'no mariadbd or mysqld on the PATH (apt-get install mariadb-server)')(
  'SIGKILLed: the private server dies and its directory is deleted once the demo is gone',
  async () => {
    const port = await freePort();
    const demo = spawnDemo(['-o', String(port)], { HOME: home, TMPDIR: tmp });
    try {
      await banner(demo, BANNER_GIVE_UP_MS);
      // The private server's command line (and its sentinel's) names its directory under $TMPDIR.
      const servers = () => spawnSync('pgrep', ['-f', tmp]).stdout.toString().trim();
      expect(servers()).not.toBe('');
      expect(await readdir(tmp)).toHaveLength(1);
      demo.child.kill('SIGKILL');
      await demo.exited;
      let polls = 0;
      // 300 polls of 0.1 s: when the test gives up, not a bound it asserts.
      while ((servers() !== '' || (await readdir(tmp)).length > 0) && polls < 300) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        polls += 1;
      }
      expect(servers()).toBe('');
      expect(await readdir(tmp)).toEqual([]);
      console.log(`demo SIGKILLed: server and directory gone after ${polls} polls of 0.1 s`);
    } finally {
      await ensureStopped(demo);
    }
  },
  120_000,
);

describe('with a database of your own', () => {
  const server = testServer();
  let db: TestDatabase;
  afterEach(async () => {
    await db?.drop();
  });
  const flags = (database: string, port: number) => [
    ...connectionFlags(database, server),
    '-o',
    String(port),
  ];

  test('an empty database gets the example and is served; SIGINT leaves it there', async () => {
    db = await createTestDatabase();
    const port = await freePort();
    const demo = spawnDemo(flags(db.name, port), { HOME: home, TMPDIR: tmp });
    try {
      const text = await banner(demo, BANNER_GIVE_UP_MS);
      expect(text).toContain(`database ${db.name} (4 tables and 1 view) on MariaDB`);
      expect(text).toContain('the example stays in the database');
      // The test server's binary log is off: the banner says so and prints no stream.
      expect(text.split('\n')[1]).toBe('change feed: off (log_bin is OFF)');
      expect(commands(text)).toHaveLength(3);
      expect(text).not.toContain('/changes');
      expect((await runWithFetch(commands(text))).read).toEqual(TEA_UNDER_20);
      demo.child.kill('SIGINT');
      expect(await demo.exited).toBe(0);
    } finally {
      await ensureStopped(demo);
    }
    const [rows] = await db.admin.query<RowDataPacket[]>(
      'SELECT email FROM users_created_by_tablegate',
    );
    expect(rows.map((r) => r.email)).toEqual(['demo@tablegate.dev']);
    expect(await readdir(tmp)).toEqual([]);
  }, 90_000);

  test('a database with tables is refused in one line, exit 1', async () => {
    db = await createTestDatabase('CREATE TABLE mine (id INT PRIMARY KEY)');
    const demo = spawnDemo(flags(db.name, await freePort()), { HOME: home, TMPDIR: tmp });
    expect(await demo.exited).toBe(1);
    expect(demo.stderr()).toBe(
      `tablegate: database ${db.name} already has 1 table: the demo loads its example only into an empty database\n`,
    );
    expect(demo.stdout()).toBe('');
    const [tables] = await db.admin.query<RowDataPacket[]>('SHOW TABLES');
    expect(tables).toHaveLength(1);
  });
});

describe('cannot start', () => {
  test('no server binary and no Docker engine: one line saying what to install', async () => {
    expect(findServerBinary('/nonexistent', [])).toBeNull();
    let asked = 0;
    const demo = new Demo(demoSettings([], { listen: '0' }, {}), {
      findServer: () => findServerBinary('/nonexistent', []),
      dockerAnswers: async () => {
        asked += 1;
        return false;
      },
    });
    const error = await demo.start().catch((e: unknown) => e);
    await demo.stop();
    expect(asked).toBe(1);
    expect(error).toBeInstanceOf(DemoError);
    expect((error as Error).message).toBe(
      'no mariadbd or mysqld on the PATH (or in /usr/sbin) and no Docker engine answers: install MariaDB (apt install mariadb-server, brew install mariadb) or Docker, or give your own database with -h -u -p -P -D',
    );
  });

  testIf(CAN_HIDE_SERVER, 'needs unshare -m (root) to hide mariadbd')(
    'as a process: no mariadbd or mysqld, DOCKER_HOST answering nothing: that line, exit 1',
    async () => {
      const demo = spawnDemo(
        ['-o', String(await freePort())],
        { HOME: home, TMPDIR: tmp, DOCKER_HOST: 'unix:///nonexistent' },
        true,
      );
      expect(await demo.exited).toBe(1);
      expect(demo.stderr()).toBe(`tablegate: ${NO_SERVER}\n`);
      expect(demo.stdout()).toBe('');
      expect(await readdir(tmp)).toEqual([]);
    },
    20_000,
  );

  test('the port is taken: one line, before any server starts, exit 1', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      const demo = spawnDemo(['-o', String(port)], { HOME: home, TMPDIR: tmp });
      expect(await demo.exited).toBe(1);
      expect(demo.stderr()).toBe(
        `tablegate: port ${port} is already in use on 127.0.0.1: choose another with -o <port>\n`,
      );
      expect(await readdir(tmp)).toEqual([]);
    } finally {
      taken.close();
    }
  });

  test('an extra word is a usage error', async () => {
    const demo = spawnDemo(['now'], { HOME: home, TMPDIR: tmp });
    expect(await demo.exited).toBe(2);
    expect(demo.stderr().split('\n')[0]).toBe("tablegate: unexpected argument 'now' after 'demo'");
  });
});

test("the demo's container image is the compose file's MySQL image", () => {
  const compose = parse(readFileSync(path.resolve('docker-compose.yml'), 'utf8')) as {
    services: { db: { image: string } };
  };
  expect(DEMO_IMAGE).toBe(compose.services.db.image);
});

test('the example SQL is the one docker-compose loads', () => {
  expect(existsSync(path.resolve('docker/initdb/01-example.sql'))).toBe(true);
});
