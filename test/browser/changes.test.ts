/**
 * The change feed in a real browser (Debian's chromium driven by playwright-core) with its own
 * EventSource and `?access_token=`, and in Node with the `eventsource` package: the two examples
 * of docs/changes.md run exactly as printed, against the example shop (the demo's database) on a
 * private MariaDB with the binary log on, served by the real `tablegate run auth` process at log
 * level info. Changes are written by a plain mysql2 connection; every event the examples print is
 * checked, and the token never appears in the gateway's log. A page of another origin reads the
 * stream only when `--cors-origin` names it. Without a browser: the browser tests fail under CI
 * and are skipped with a message elsewhere.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { type BrowserContext, type ConsoleMessage, chromium } from 'playwright-core';
import { freePort, type PrivateServer } from '../../src/demo/private-server.js';
import { postCredentials } from '../helpers/gateway.js';
import { rootConnection, startBinlogServer } from '../helpers/private-servers.js';
import { testIf } from '../helpers/skip.js';

const BROWSER = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((file) => existsSync(file));
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
const EXAMPLE_SQL = readFileSync('docker/initdb/01-example.sql', 'utf8');
const USER = { email: 'feed@example.com', password: 'browser feed password' };
const DB = 'shop_feed';

/** The commit time the changes are written with (`SET timestamp`): the events' `at`. */
const COMMITTED = 1_767_323_045;
const AT = '2026-01-02 03:04:05';

// Under CI a missing browser fails the test; elsewhere it is skipped and named in the summary.
const inBrowser = testIf(
  BROWSER !== undefined || Boolean(process.env.CI),
  'no /usr/bin/chromium (apt-get install chromium)',
);

/** The ```js block of docs/changes.md that contains `marker`, as printed. */
function example(marker: string): string {
  const blocks = readFileSync('docs/changes.md', 'utf8').split('```js\n').slice(1);
  const found = blocks
    .map((block) => block.slice(0, block.indexOf('\n```')))
    .filter((code) => code.includes(marker));
  if (found.length !== 1)
    throw new Error(`docs/changes.md: ${found.length} examples with ${marker}`);
  return found[0] as string;
}

let server: PrivateServer;
let writer: mysql.Connection;
let home: string;
let gateway: ChildProcess;
let output = '';
let url: string;
let token: string;
let customer: number;
/**
 * A page server of another origin (another port), the one `--cors-origin` names; the same page as
 * `localhost` is a third origin. Both on the loopback address, as the gateway: Chromium keeps a
 * page of a public address from reaching a loopback one at all (Private Network Access).
 */
const app = {
  origin: '',
  server: createServer((_request, response) => {
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>app</title>');
  }),
};

/** Starts `tablegate run auth` on `port` (again, after a stop: its secret stays in `home`). */
async function startGateway(port: number): Promise<void> {
  const started = output.length;
  gateway = spawn(process.execPath, [path.resolve('dist/cli.js'), 'run', 'auth'], {
    env: {
      PATH: process.env.PATH,
      HOME: home,
      TABLEGATE_DB_HOST: server.host,
      TABLEGATE_DB_PORT: String(server.port),
      TABLEGATE_DB_USER: server.user,
      TABLEGATE_DB_PASSWORD: server.password,
      TABLEGATE_DB_NAME: DB,
      TABLEGATE_LISTEN_PORT: String(port),
      TABLEGATE_LOG_LEVEL: 'info',
      TABLEGATE_CHANGE_FEED: 'on',
      TABLEGATE_CORS_ORIGIN: app.origin,
    },
  });
  gateway.stdout?.on('data', (d) => (output += d));
  gateway.stderr?.on('data', (d) => (output += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (output.slice(started).includes('change feed: on')) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    gateway.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`exited ${code}: ${output}`));
    });
  });
}

/** Stops the gateway as systemd would (SIGTERM) and waits for it to exit. */
async function stopGateway(): Promise<void> {
  if (gateway.exitCode !== null) return;
  gateway.kill('SIGTERM');
  await new Promise((resolve) => gateway.once('exit', resolve));
}

beforeAll(async () => {
  server = await startBinlogServer();
  writer = await rootConnection(server);
  await writer.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await writer.query(`USE ${DB}`);
  await writer.query(EXAMPLE_SQL);
  await writer.query(`SET timestamp = ${COMMITTED}`);
  const [[first]] = (await writer.query('SELECT MIN(id) AS id FROM customers')) as unknown as [
    { id: number }[],
  ];
  customer = first?.id as number;
  home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-feed-browser-'));
  await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
  app.origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  await startGateway(port);
  expect((await postCredentials(url, '/auth/register', USER.email, USER.password)).status).toBe(
    200,
  );
  const login = await postCredentials(url, '/auth/login', USER.email, USER.password);
  token = (login.body as { token: string }).token;
}, 60_000);

afterAll(async () => {
  if (gateway) await stopGateway();
  await writer?.end();
  await server?.destroy();
  if (home) await rm(home, { recursive: true, force: true });
  app.server.close();
});

/** Runs one autocommitted statement and gives back its transaction's GTID (the events' `tx`). */
async function write(sql: string, values: unknown[] = []): Promise<string> {
  await writer.query(sql, values);
  const [[row]] = (await writer.query('SELECT @@last_gtid AS gtid')) as unknown as [
    { gtid: string }[],
  ];
  return row?.gtid as string;
}

/** A new order, paid, then deleted: its id, and the three events each example must print. */
async function orderLifecycle() {
  await writer.query('INSERT INTO orders (customer_id, ordered_at) VALUES (?, NOW())', [customer]);
  const [[row]] = (await writer.query(
    'SELECT LAST_INSERT_ID() AS id, @@last_gtid AS gtid',
  )) as unknown as [{ id: number; gtid: string }[]];
  const id = row?.id as number;
  const paid = await write("UPDATE orders SET status = 'paid' WHERE id = ?", [id]);
  const deleted = await write('DELETE FROM orders WHERE id = ?', [id]);
  const common = { table: 'orders', key: { id }, at: AT };
  const events = [
    ['insert', { op: 'insert', ...common, row: { id, status: 'new' }, tx: row?.gtid }],
    ['update', { op: 'update', ...common, row: { id, status: 'paid' }, tx: paid }],
    ['delete', { op: 'delete', ...common, tx: deleted }],
  ].map(([op, data]) => [op, JSON.parse(JSON.stringify(data))]);
  return { id, events };
}

async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check()) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let context: BrowserContext | undefined;
let profile: string | undefined;

async function browser(): Promise<BrowserContext> {
  if (!BROWSER) throw new Error('no browser: apt-get install chromium (/usr/bin/chromium)');
  if (context) return context;
  profile = await mkdtemp(path.join(os.tmpdir(), 'tablegate-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: BROWSER,
    headless: true,
    args: ARGS,
  });
  return context;
}

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

inBrowser(
  "the browser's EventSource with ?access_token=: the example prints every change; the token is never logged",
  async () => {
    const page = await (await browser()).newPage();
    const printed: unknown[][] = [];
    const reading: Promise<void>[] = [];
    page.on('console', (message: ConsoleMessage) => {
      // The example prints with console.log; the browser's own lines are errors.
      if (message.type() !== 'log') return;
      reading.push(
        Promise.all(message.args().map((arg) => arg.jsonValue())).then((args) => {
          printed.push(args);
        }),
      );
    });
    const answers: [string, number][] = [];
    page.on('response', (response) => {
      const { pathname, search } = new URL(response.url());
      answers.push([pathname + search.replace(token, '<token>'), response.status()]);
    });
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    // A page of the gateway's own origin, so that the example's relative URL reaches it.
    await page.goto(`${url}/live`);
    await page.addScriptTag({
      content: `const token = ${JSON.stringify(token)};\n${example('new EventSource(`/table/')}`,
    });
    // The example's `feed` is a global binding of the page's script, not a property of window.
    await until(async () => (await page.evaluate('feed.readyState')) === 1);
    const { events: expected } = await orderLifecycle();
    await until(async () => {
      await Promise.all(reading);
      return printed.length >= 3;
    });
    await new Promise((resolve) => setTimeout(resolve, 700));
    await Promise.all(reading);
    expect(printed).toEqual(expected);

    // A bad token: a 401, and the browser's EventSource closes for good. An option the feed
    // does not take, with the good token: 400, and a line in the log for the URL.
    const refused = await page.evaluate(async (good) => {
      const bad = new EventSource('/table/orders/changes?access_token=not.a.token');
      await new Promise((resolve) => {
        bad.onerror = resolve;
      });
      const answer = await fetch(`/table/orders/changes?access_token=${good}&$top=1`);
      return { badState: bad.readyState, status: answer.status, body: await answer.json() };
    }, token);
    expect(refused).toEqual({
      badState: 2,
      status: 400,
      body: {
        success: false,
        message: 'The change feed takes $select, $filter and $since (or Last-Event-ID), not $top',
        code: 'UNSUPPORTED_IN_FEED',
      },
    });
    await page.evaluate('feed.close()');
    await page.close();
    expect(failures).toEqual([]);
    expect(answers).toEqual([
      ['/live', 200],
      ['/table/orders/changes?$select=id,status&access_token=<token>', 200],
      ['/table/orders/changes?access_token=not.a.token', 401],
      ['/table/orders/changes?access_token=<token>&$top=1', 400],
    ]);

    // One access line per request, the stream's when it ended, the token redacted in each.
    const requests = () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; url: string; status: number })
        .filter((entry) => entry.msg === 'request' && entry.url.startsWith('/table/'))
        .map((entry) => [entry.url, entry.status]);
    await until(() => requests().length >= 3);
    expect(requests()).toEqual([
      ['/table/orders/changes?access_token=[redacted]', 401],
      ['/table/orders/changes?access_token=[redacted]&$top=1', 400],
      ['/table/orders/changes?$select=id,status&access_token=[redacted]', 200],
    ]);
    expect(output).not.toContain(token);
    expect(output).not.toContain(token.split('.')[2]);
  },
  60_000,
);

inBrowser(
  'from a page of another origin: the stream opens for the --cors-origin one only',
  async () => {
    const open = async (origin: string) => {
      const page = await (await browser()).newPage();
      await page.goto(`${origin}/`);
      await page.evaluate(
        ([gateway, jwt]) => {
          const seen: unknown[] = [];
          const feed = new EventSource(
            `${gateway}/table/orders/changes?$select=id,status&access_token=${jwt}`,
          );
          feed.addEventListener('insert', (e) => seen.push(JSON.parse(e.data).row));
          Object.assign(window, { feed, seen });
        },
        [url, token],
      );
      return page;
    };
    const state = (page: import('playwright-core').Page) =>
      page.evaluate(() => {
        const { feed, seen } = window as unknown as { feed: EventSource; seen: unknown[] };
        return { readyState: feed.readyState, seen };
      });
    const allowed = await open(app.origin);
    const other = await open(app.origin.replace('127.0.0.1', 'localhost'));
    await until(async () => (await state(allowed)).readyState === 1);
    await until(async () => (await state(other)).readyState === 2);
    await writer.query('INSERT INTO orders (customer_id, ordered_at) VALUES (?, NOW())', [
      customer,
    ]);
    const [[row]] = (await writer.query('SELECT LAST_INSERT_ID() AS id')) as unknown as [
      { id: number }[],
    ];
    await until(async () => (await state(allowed)).seen.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await state(allowed)).toEqual({ readyState: 1, seen: [{ id: row?.id, status: 'new' }] });
    expect(await state(other)).toEqual({ readyState: 2, seen: [] });
    await allowed.close();
    await other.close();
  },
  60_000,
);

/**
 * A page of `origin` follows the feed through the gateway's full URL; the gateway is stopped as
 * systemd stops it (SIGTERM) and started again on its port. The browser's EventSource reconnects
 * by itself with Last-Event-ID and gets exactly the changes made meanwhile, none twice; the
 * stream the stop ended has one access line.
 */
async function followAcrossRestart(origin: string): Promise<void> {
  const page = await (await browser()).newPage();
  await page.goto(`${origin}/${origin === url ? 'live' : ''}`);
  await page.evaluate(
    ([gateway, jwt]) => {
      const seen: unknown[] = [];
      const feed = new EventSource(
        `${gateway}/table/orders/changes?$select=id,status&access_token=${jwt}`,
      );
      for (const op of ['insert', 'update', 'delete']) {
        feed.addEventListener(op, (e) => seen.push([op, JSON.parse(e.data)]));
      }
      Object.assign(window, { feed, seen });
    },
    [url, token],
  );
  const state = () =>
    page.evaluate(() => {
      const { feed, seen } = window as unknown as { feed: EventSource; seen: unknown[] };
      return { readyState: feed.readyState, seen };
    });
  await until(async () => (await state()).readyState === 1);
  const before = await orderLifecycle();
  await until(async () => (await state()).seen.length >= 3);
  const logged = output.length;
  await stopGateway();
  // The stream the stop ended got its access line then, and every request has one line only.
  const requests = (text: string) =>
    text
      .split('\n')
      .filter((line) => line.includes('"msg":"request"'))
      .map(
        (line) => JSON.parse(line) as { reqId: string; pid: number; url: string; status: number },
      );
  expect(requests(output.slice(logged)).map((entry) => [entry.url, entry.status])).toContainEqual([
    '/table/orders/changes?$select=id,status&access_token=[redacted]',
    200,
  ]);
  const ids = requests(output).map((entry) => `${entry.pid} ${entry.reqId}`);
  expect(ids.length).toBeGreaterThan(3);
  expect(new Set(ids).size).toBe(ids.length);
  const meanwhile = await orderLifecycle();
  await startGateway(Number(new URL(url).port));
  const after = await orderLifecycle();
  await until(async () => (await state()).seen.length >= 9, 20_000);
  await new Promise((resolve) => setTimeout(resolve, 700));
  expect(await state()).toEqual({
    readyState: 1,
    seen: [...before.events, ...meanwhile.events, ...after.events],
  });
  await page.close();
}

inBrowser(
  "a page of another origin: the browser's EventSource resumes after the gateway restarts",
  () => followAcrossRestart(app.origin),
  60_000,
);

// A page of the gateway's own origin leaves Chromium a spare connection to it: a stopping
// gateway closes it (http/connections.ts), or the EventSource's reconnect would meet the stop's
// 503 on it and give up for good.
test(
  "a page of the gateway's origin: the browser's EventSource resumes after the gateway restarts",
  () => followAcrossRestart(url),
  60_000,
);

test('Node with the eventsource package: the example prints every change with its event id', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-feed-node-'));
  let child: ChildProcess | undefined;
  try {
    // Node finds the example's `eventsource` through the link to the project's node_modules.
    await symlink(path.resolve('node_modules'), path.join(dir, 'node_modules'));
    const code = example("from 'eventsource'").replace('http://127.0.0.1:8080', url);
    await writeFile(path.join(dir, 'feed.mjs'), code);
    let printed = '';
    child = spawn(process.execPath, ['feed.mjs'], {
      cwd: dir,
      env: { PATH: process.env.PATH, TOKEN: token },
    });
    child.stdout?.on('data', (d) => (printed += d));
    child.stderr?.on('data', (d) => (printed += d));
    /** What it printed: `op id data` lines, each parsed. */
    const lines = () =>
      printed
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => {
          const [op, id, ...data] = line.split(' ');
          return { line, op, id: id ?? '', data: JSON.parse(data.join(' ')) };
        });
    // Its stream is open once a change made now is printed: orders made and deleted until one is.
    await until(async () => {
      if (printed !== '') return true;
      await orderLifecycle();
      await new Promise((resolve) => setTimeout(resolve, 300));
      return false;
    });
    expect(printed).toMatch(/^insert f1\./);
    const { id: order, events: expected } = await orderLifecycle();
    const ofOrder = () => lines().filter((entry) => entry.data.key.id === order);
    await until(() => ofOrder().length >= 3);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(ofOrder().map((entry) => [entry.op, entry.data])).toEqual(expected);
    // Every line as the example prints it, each event with an id of its own.
    const all = lines();
    expect(
      all.filter((entry) => !/^(insert|update|delete) f1\.[\w-]+\.[\w-]+ \{/.test(entry.line)),
    ).toEqual([]);
    expect(new Set(all.map((entry) => entry.id)).size).toBe(all.length);
  } finally {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child?.once('exit', resolve));
    }
    await rm(dir, { recursive: true, force: true });
  }
}, 45_000);
