/**
 * `-h` with several hosts (docs/operations.md): the built command against two private MariaDB
 * servers holding the same table (each row says which server it is on). It starts on the first host
 * that answers, fails over to the next when the one in use is killed (SIGKILL) — one log line,
 * while the first is still down, no fail-back — and names every host when none answers at start.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { freePort, type PrivateServer, startPrivateServer } from '../../src/demo/private-server.js';
import { HEALTH_TIMEOUT_MS, STATEMENT_ALIVE_CHECK_MS, WATCHDOG_TICK_MS } from '../../src/limits.js';
import { builtCli } from '../helpers/cli.js';
import { rootConnection } from '../helpers/private-servers.js';

const DATABASE = 'several_hosts';
/**
 * How long a test waits for the switch (or for its answers to pile up) before it fails: a
 * generous bound for a loaded machine, not a measurement (the times are printed).
 */
const GIVE_UP_MS = 30_000;
/** Answers each phase of the kill test collects: before the kill, after the first host is back. */
const PHASE_ANSWERS = 20;
const CLIENTS = 6;
const UNAVAILABLE = {
  success: false,
  message: 'Database unavailable',
  code: 'DATABASE_UNAVAILABLE',
};

let one: PrivateServer;
let two: PrivateServer;
let home: string;

async function prepare(server: PrivateServer, name: string): Promise<void> {
  const admin = await rootConnection(server);
  await admin.query(`
    CREATE DATABASE ${DATABASE};
    USE ${DATABASE};
    CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, server VARCHAR(10) NOT NULL);
    INSERT INTO items (server) VALUES ('${name}');
  `);
  await admin.end();
}

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-hosts-'));
  [one, two] = await Promise.all([startPrivateServer(), startPrivateServer()]);
  await Promise.all([prepare(one, 'one'), prepare(two, 'two')]);
}, 90_000);

afterAll(async () => {
  await Promise.all([one?.destroy(), two?.destroy()]);
  await rm(home, { recursive: true, force: true });
});

const at = (port: number) => `127.0.0.1:${port}`;

function args(hosts: string, listen: number): string[] {
  return ['run', '-h', hosts, '-u', 'root', '-p', '', '-D', DATABASE, '-o', String(listen)];
}

interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything printed so far. */
  output(): string;
  stop(): Promise<number | null>;
}

/** Starts the command and resolves once it printed its start-up line. */
function start(hosts: string, listen: number): Promise<Running> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [builtCli(), ...args(hosts, listen)], {
      env: { PATH: process.env.PATH, HOME: home, TABLEGATE_LOG_LEVEL: 'warn' },
    });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
      if (output.includes('tablegate listening')) {
        resolve({
          child,
          url: `http://127.0.0.1:${listen}`,
          output: () => output,
          stop: () => {
            const exit = new Promise<number | null>((r) => child.once('exit', r));
            child.kill('SIGTERM');
            return exit;
          },
        });
      }
    });
    child.stderr.on('data', (d) => (output += d));
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
}

function run(hosts: string, listen: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [builtCli(), ...args(hosts, listen)], {
      env: { PATH: process.env.PATH, HOME: home },
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

interface Outcome {
  readonly start: number;
  readonly end: number;
  readonly status: number;
  readonly body: unknown;
}

async function read(url: string): Promise<Outcome> {
  const start = Date.now();
  try {
    const response = await fetch(`${url}/table/items/read?$select=server&$top=1`, {
      signal: AbortSignal.timeout(10_000),
    });
    return { start, end: Date.now(), status: response.status, body: await response.json() };
  } catch (error) {
    return { start, end: Date.now(), status: 0, body: String(error) };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('the first host does not answer: it starts on the second and serves from it', async () => {
  const closed = await freePort();
  const gateway = await start(`${at(closed)},${at(two.port)}`, await freePort());
  try {
    const outcome = await read(gateway.url);
    expect([outcome.status, outcome.body]).toEqual([200, [{ server: 'two' }]]);
  } finally {
    expect(await gateway.stop()).toBe(0);
  }
  // Nothing switched: starting past a dead host is not a switch.
  expect(gateway.output()).not.toContain('is not answering');
}, 30_000);

test('no host answers at start: exit 1, one line naming every host tried', async () => {
  const [a, b] = [await freePort(), await freePort()];
  const { code, stderr } = await run(`${at(a)},[::1]:${b}`, await freePort());
  expect(code).toBe(1);
  expect(stderr).toMatch(
    new RegExp(
      `^tablegate: cannot connect to MySQL at 127\\.0\\.0\\.1:${a}, \\[::1\\]:${b} as root: ` +
        `127\\.0\\.0\\.1:${a}: connect ECONNREFUSED 127\\.0\\.0\\.1:${a}; \\[::1\\]:${b}: [^\\n]+\\n$`,
    ),
  );
}, 30_000);

test('a malformed host list is a usage error (exit 2)', async () => {
  const { code, stderr } = await run('db1:3306,,db2:3306', await freePort());
  expect(code).toBe(2);
  expect(stderr.split('\n')[0]).toBe(
    "tablegate: -h/--host 'db1:3306,,db2:3306': an empty entry (write hosts as db1,db2:3307)",
  );
});

test('the host in use is killed under load: one switch to the next while it is down, no fail-back', async () => {
  const gateway = await start(`${at(one.port)},${at(two.port)}`, await freePort());
  const outcomes: Outcome[] = [];
  let stopped = false;
  const clients = Array.from({ length: CLIENTS }, async () => {
    while (!stopped) {
      outcomes.push(await read(gateway.url));
      await sleep(20);
    }
  });
  /** Waits until `count()` is over PHASE_ANSWERS, at most GIVE_UP_MS. */
  const collect = async (count: () => number) => {
    for (const start = Date.now(); count() <= PHASE_ANSWERS && Date.now() - start < GIVE_UP_MS; ) {
      await sleep(50);
    }
  };
  try {
    await collect(() => outcomes.length);
    const killed = Date.now();
    await one.kill();
    // The server has exited: nothing that starts now can be answered by it.
    const dead = Date.now();
    const fromTwo = (o: Outcome) => o.status === 200 && isEqual(o.body, [{ server: 'two' }]);
    let firstFromTwo: Outcome | undefined;
    while (!firstFromTwo && Date.now() - killed < GIVE_UP_MS) {
      await sleep(50);
      firstFromTwo = outcomes.find(fromTwo);
    }
    // The first host comes back: the gateway stays where it is (no fail-back while it works).
    const restarting = Date.now();
    await one.restart();
    const back = Date.now();
    await collect(() => outcomes.filter((o) => o.start > back).length);
    stopped = true;
    await Promise.all(clients);

    const before = outcomes.filter((o) => o.end < killed);
    expect(before.length).toBeGreaterThan(PHASE_ANSWERS);
    expect(before.filter((o) => o.status !== 200 || !isEqual(o.body, [{ server: 'one' }]))).toEqual(
      [],
    );
    expect(firstFromTwo).toBeDefined();
    // The gateway switched by itself, while the first host was still down (not because it came
    // back, which would have it answer 'one').
    expect((firstFromTwo as Outcome).end).toBeLessThan(restarting);
    const failoverMs = (firstFromTwo as Outcome).end - killed;
    // Meanwhile: answers from the first host while it was dying, reads whose connection died
    // with it read again on the second (execute/retry.ts), then 503s (requests on the host
    // that died), never anything else.
    const during = outcomes.filter(
      (o) => o.end >= killed && o.start < (firstFromTwo as Outcome).start,
    );
    const lastWords = (o: Outcome) =>
      o.start < dead && o.status === 200 && isEqual(o.body, [{ server: 'one' }]);
    const readAgain = (o: Outcome) => o.status === 200 && isEqual(o.body, [{ server: 'two' }]);
    const unavailable = (o: Outcome) => o.status === 503 && isEqual(o.body, UNAVAILABLE);
    expect(during.filter((o) => !lastWords(o) && !readAgain(o) && !unavailable(o))).toEqual([]);
    // From the first answer of the second host on, every answer comes from it.
    const after = outcomes.filter((o) => o.start > (firstFromTwo as Outcome).end);
    expect(outcomes.filter((o) => o.start > back).length).toBeGreaterThan(PHASE_ANSWERS);
    expect(after.filter((o) => o.status !== 200 || !isEqual(o.body, [{ server: 'two' }]))).toEqual(
      [],
    );
    const health = await fetch(`${gateway.url}/health`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const switches = gateway
      .output()
      .split('\n')
      .filter((line) => line.includes('is not answering'));
    expect(switches).toHaveLength(1);
    expect(JSON.parse(switches[0] as string)).toMatchObject({
      level: 40,
      msg: `MySQL host ${at(one.port)} is not answering; now using ${at(two.port)}`,
    });
    console.log(
      `several hosts: failover ${failoverMs} ms after the kill (the server took ${dead - killed} ms to exit); ${during.filter(unavailable).length} requests answered 503 meanwhile; ${after.length} served by the second host after`,
    );
  } finally {
    stopped = true;
    await Promise.all(clients);
    await gateway.stop();
  }
}, 120_000);

test('the host in use freezes (SIGSTOP): the ping goes unanswered, the next host takes over', async () => {
  const gateway = await start(`${at(one.port)},${at(two.port)}`, await freePort());
  const pid = Number(await readFile(path.join(path.dirname(one.dataDir), 'mysql.pid'), 'utf8'));
  try {
    expect(await read(gateway.url)).toMatchObject({ status: 200, body: [{ server: 'one' }] });
    const frozen = Date.now();
    process.kill(pid, 'SIGSTOP');
    let outcome: Outcome;
    const seen: Outcome[] = [];
    do {
      outcome = await read(gateway.url);
      seen.push(outcome);
    } while (!isEqual(outcome.body, [{ server: 'two' }]) && Date.now() - frozen < GIVE_UP_MS);
    const failoverMs = outcome.end - frozen;
    // A statement meets the frozen server; once it is STATEMENT_ALIVE_CHECK_MS overdue the
    // watchdog's next look (WATCHDOG_TICK_MS) pings, the ping gives up after HEALTH_TIMEOUT_MS,
    // and the next host is opened (no second ping): about 2 s (printed). The second host
    // answers while the first is still frozen (SIGCONT comes only in the finally below): the
    // gateway gave up on the silence by itself.
    expect(isEqual(outcome.body, [{ server: 'two' }])).toBe(true);
    expect(seen.slice(0, -1).filter((o) => o.status !== 503)).toEqual([]);
    const switches = gateway
      .output()
      .split('\n')
      .filter((line) => line.includes('is not answering'));
    expect(switches.map((line) => JSON.parse(line).msg)).toEqual([
      `MySQL host ${at(one.port)} is not answering; now using ${at(two.port)}`,
    ]);
    console.log(
      `several hosts, frozen: the second host answered ${failoverMs} ms after SIGSTOP (${seen.length - 1} requests answered 503 first; by construction about ${STATEMENT_ALIVE_CHECK_MS + WATCHDOG_TICK_MS + HEALTH_TIMEOUT_MS} ms)`,
    );
  } finally {
    process.kill(pid, 'SIGCONT');
    await gateway.stop();
  }
}, 60_000);

function isEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
