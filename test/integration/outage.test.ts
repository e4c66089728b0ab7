/**
 * MySQL outage drill (docs/errors.md, docs/operations.md): a private mariadbd under a steady mixed
 * load of reads and single-row creates is killed hard (SIGKILL), stays down for 10 s or more and is
 * restarted on the same data directory, while the gateway keeps running. While it is down every
 * request answers 503 DATABASE_UNAVAILABLE quickly; after it is back the gateway serves again
 * without a restart; every create answered 200 is durable, and no create is there twice (each
 * unique key is tried once). Then the server is frozen (SIGSTOP) instead: /health and ordinary
 * requests must still answer, 503, while it is still frozen (a frozen server never refuses, it
 * just never answers). Last, a busy but live server — its CPUs taken, every pool connection's statement
 * waiting for a lock, a big read taken slowly — must never be taken for a frozen one: every answer
 * 200; nor a live server whose answer to a ping waited while the gateway's own event loop was held
 * up.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import mysql from 'mysql2/promise';
import { type PrivateServer, startPrivateServer } from '../../src/demo/private-server.js';
import {
  ALIVE_CHECK_MS,
  HEALTH_TIMEOUT_MS,
  STATEMENT_ALIVE_CHECK_MS,
  WAIT_SWEEP_MS,
  WATCHDOG_TICK_MS,
} from '../../src/limits.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rootConnection } from '../helpers/private-servers.js';

const DATABASE = 'outage';
const LOOPS = 8;
/** Pause between two requests of one loop, so a loop does not spin when every answer is instant. */
const PACE_MS = 20;
/**
 * Each phase lasts until it has its answers (so a loaded machine makes it longer, never emptier),
 * at most PHASE_MAX_MS: more than BEFORE_ANSWERS before the kill; while down at least DOWN_MS and
 * more than DOWN_API_ANSWERS and DOWN_HEALTH_ANSWERS.
 */
const BEFORE_ANSWERS = 20;
const DOWN_MS = 10_000;
const DOWN_API_ANSWERS = 100;
const DOWN_HEALTH_ANSWERS = 10;
const PHASE_MAX_MS = 60_000;
/**
 * After the server is back the load goes on until a run of successes holds this many creates and
 * health checks (the recovery is shown by that run, not by a clock), or for at most AFTER_MAX_MS.
 */
const AFTER_CREATES = 10;
const AFTER_HEALTH = 3;

/** A request that takes longer than this counts as hung (and fails the drill). */
const HANG_MS = 5_000;
/** While MySQL is frozen a request may take up to ~2 s (watchdog.ts); waiting longer is a hang. */
const FROZEN_HANG_MS = 10_000;
/** How long the busy-server test holds its lock; the rows of its slow read. */
const LOCKED_MS = 3_000;
const WIDE_ROWS = 20_000;
/** How long the frozen test waits for a 200 after the thaw before it fails. */
const THAW_MAX_MS = 30_000;
const UNAVAILABLE = {
  success: false,
  message: 'Database unavailable',
  code: 'DATABASE_UNAVAILABLE',
};

const OUTCOME_UNKNOWN = {
  success: false,
  message:
    'The connection to the database was lost while the write was committing; it may or may not have been applied. Read the rows before retrying',
  code: 'WRITE_OUTCOME_UNKNOWN',
};

interface Outcome {
  readonly kind: 'read' | 'create' | 'health';
  /** The unique key a create tried (each key is tried exactly once). */
  readonly key?: string;
  readonly start: number;
  readonly end: number;
  /** 0 when no HTTP answer came (socket error or hang). */
  readonly status: number;
  readonly body: unknown;
  readonly error?: string;
}

let server: PrivateServer;
let gw: TestGateway;

beforeAll(async () => {
  server = await startPrivateServer();
  const admin = await rootConnection(server);
  await admin.query(`
    CREATE DATABASE ${DATABASE};
    USE ${DATABASE};
    CREATE TABLE items (
      id INT AUTO_INCREMENT PRIMARY KEY,
      k VARCHAR(40) NOT NULL UNIQUE,
      n INT NOT NULL
    ) ENGINE=InnoDB;
    INSERT INTO items (k, n) SELECT CONCAT('seed-', seq), seq FROM seq_1_to_200;
  `);
  await admin.end();
  gw = await startTestGateway(DATABASE, {
    db: {
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
      database: DATABASE,
      poolSize: 4,
    },
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await server?.destroy();
});

async function request(
  kind: Outcome['kind'],
  path: string,
  init: RequestInit = {},
  key?: string,
  hangMs = HANG_MS,
): Promise<Outcome> {
  const start = Date.now();
  try {
    const response = await fetch(`${gw.url}${path}`, {
      ...init,
      signal: AbortSignal.timeout(hangMs),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Kept as text: the assertions below say what was expected.
    }
    return { kind, key, start, end: Date.now(), status: response.status, body };
  } catch (error) {
    return { kind, key, start, end: Date.now(), status: 0, body: null, error: String(error) };
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One client: alternately a read and a create with a fresh unique key, until `stop()` is true. */
async function loop(index: number, stop: () => boolean, outcomes: Outcome[]): Promise<void> {
  for (let i = 0; !stop(); i++) {
    if (i % 2 === 0) {
      outcomes.push(
        await request('read', `/table/items/read?$filter=n lt 50&$orderby=id desc&$top=20`),
      );
    } else {
      const key = `w${index}-${i}`;
      outcomes.push(
        await request(
          'create',
          '/table/items/create',
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ k: key, n: 1000 + i }),
          },
          key,
        ),
      );
    }
    await sleep(PACE_MS);
  }
}

async function healthLoop(stop: () => boolean, outcomes: Outcome[]): Promise<void> {
  while (!stop()) {
    outcomes.push(await request('health', '/health'));
    await sleep(200);
  }
}

test('MySQL killed under load: fast 503s while down, service back without a restart, no acknowledged write lost', async () => {
  const outcomes: Outcome[] = [];
  const health: Outcome[] = [];
  let stopped = false;
  const stop = () => stopped;
  const clients = [
    ...Array.from({ length: LOOPS }, (_, index) => loop(index, stop, outcomes)),
    healthLoop(stop, health),
  ];

  /** Waits until `done()`, at most PHASE_MAX_MS. */
  const phase = async (done: () => boolean) => {
    for (const start = Date.now(); !done() && Date.now() - start < PHASE_MAX_MS; ) await sleep(100);
  };
  await phase(() => outcomes.length + health.length > BEFORE_ANSWERS);
  const killStart = Date.now();
  await server.kill();
  const killed = Date.now();
  await sleep(DOWN_MS);
  const answeredDown = (kind: (o: Outcome) => boolean) =>
    [...outcomes, ...health].filter((o) => o.start >= killed && kind(o)).length;
  await phase(
    () =>
      answeredDown((o) => o.kind !== 'health') > DOWN_API_ANSWERS &&
      answeredDown((o) => o.kind === 'health') > DOWN_HEALTH_ANSWERS,
  );
  const restartStart = Date.now();
  await server.restart();
  const up = Date.now();
  /** The requests begun after the server was back, from the last failure on: all succeeded. */
  const goodRun = () => {
    const after = [...outcomes, ...health]
      .filter((o) => o.start >= up)
      .sort((a, b) => a.start - b.start);
    return after.slice(findLastIndex(after, (o) => o.status !== 200) + 1);
  };
  const enough = (run: Outcome[]) =>
    run.filter((o) => o.kind === 'create').length > AFTER_CREATES &&
    run.filter((o) => o.kind === 'health').length > AFTER_HEALTH;
  await phase(() => enough(goodRun()));
  stopped = true;
  await Promise.all(clients);

  const all = [...outcomes, ...health];
  // Nothing hung, nothing crashed, no 500: every answer is a success or a 503.
  const unexpected = all.filter((o) => o.status !== 200 && o.status !== 503);
  expect(unexpected.slice(0, 5)).toEqual([]);

  // Before the kill everything succeeded.
  const before = all.filter((o) => o.end < killStart);
  expect(before.length).toBeGreaterThan(BEFORE_ANSWERS);
  expect(before.filter((o) => o.status !== 200)).toEqual([]);

  // Wholly inside the outage: every answer is the 503, quickly.
  const down = all.filter((o) => o.start >= killed && o.end <= restartStart);
  const downApi = down.filter((o) => o.kind !== 'health');
  expect(downApi.length).toBeGreaterThan(DOWN_API_ANSWERS);
  expect(downApi.filter((o) => o.status !== 503 || !isEqual(o.body, UNAVAILABLE))).toEqual([]);
  const downHealth = down.filter((o) => o.kind === 'health');
  expect(downHealth.length).toBeGreaterThan(DOWN_HEALTH_ANSWERS);
  expect(
    downHealth.filter((o) => o.status !== 503 || !isEqual(o.body, { status: 'unavailable' })),
  ).toEqual([]);
  // Quickly, not when the server came back: every request begun in the first half of the
  // outage was answered, 503, while the server was still down (a request that waited for the
  // server would be answered after the restart began).
  const early = all.filter((o) => o.start >= killed && o.start < killed + DOWN_MS / 2);
  expect(early.length).toBeGreaterThan(0);
  expect(early.filter((o) => o.status !== 503 || o.end > restartStart)).toEqual([]);
  const failed = all.filter((o) => o.status === 503);
  const maxFailedMs = Math.max(...failed.map((o) => o.end - o.start));

  // Back without a restart of the gateway: after the server's return there is a run of
  // successes to the end, with creates and health checks in it.
  const afterOk = goodRun();
  expect(afterOk.filter((o) => o.kind === 'create').length).toBeGreaterThan(AFTER_CREATES);
  expect(afterOk.filter((o) => o.kind === 'health').length).toBeGreaterThan(AFTER_HEALTH);
  const recoveryMs = Math.max(0, (afterOk[0]?.start ?? up) - up);
  for (const o of afterOk.filter((o) => o.kind === 'health')) {
    expect(o.body).toEqual({ status: 'ok' });
  }

  // Durability: read the table behind the gateway's back.
  const check = await mysql.createConnection({
    host: server.host,
    port: server.port,
    user: server.user,
    password: server.password,
    database: DATABASE,
  });
  const [rows] = await check.query<mysql.RowDataPacket[]>(
    "SELECT id, k FROM items WHERE k NOT LIKE 'seed-%'",
  );
  const [twice] = await check.query<mysql.RowDataPacket[]>(
    'SELECT k, COUNT(*) AS n FROM items GROUP BY k HAVING COUNT(*) > 1',
  );
  await check.end();
  const stored = new Map(rows.map((row) => [String(row.k), Number(row.id)]));
  const creates = outcomes.filter((o) => o.kind === 'create');
  const acknowledged = creates.filter((o) => o.status === 200);
  const refused = creates.filter((o) => o.status !== 200);
  const attempted = new Set(creates.map((o) => o.key));
  // Every create answered 200 is there, under the id the answer named.
  const lost = acknowledged.filter(
    (o) => stored.get(o.key as string) !== (o.body as { insertId: number }).insertId,
  );
  expect(lost).toEqual([]);
  // Nothing is there that was never tried, nothing twice.
  expect([...stored.keys()].filter((k) => !attempted.has(k))).toEqual([]);
  expect(twice).toEqual([]);
  // A create answered with an error may have committed (its COMMIT was on the wire when the
  // server died): allowed, counted, and then answered WRITE_OUTCOME_UNKNOWN, never
  // DATABASE_UNAVAILABLE (execute/retry.ts).
  const refusedButStored = refused.filter((o) => stored.has(o.key as string));
  const unknown = refused.filter((o) => isEqual(o.body, OUTCOME_UNKNOWN));
  expect(refusedButStored.filter((o) => !unknown.includes(o))).toEqual([]);

  console.log(
    [
      `outage drill: ${all.length} requests (${outcomes.length} reads/creates, ${health.length} health checks)`,
      `${downApi.length} requests while down, all 503; slowest 503 ${maxFailedMs} ms`,
      `kill took ${killed - killStart} ms, restart took ${up - restartStart} ms, recovery ${recoveryMs} ms after the server answered`,
      `creates: ${creates.length} tried, ${acknowledged.length} answered 200 (all stored), ${refused.length} refused (${unknown.length} WRITE_OUTCOME_UNKNOWN), ${refusedButStored.length} of those stored anyway; rows present: ${stored.size}`,
    ].join('\n'),
  );
}, 240_000);

/** Resolves once every thread of `pid` is in the stopped state (`T` in /proc); throws after 5 s. */
async function untilStopped(pid: number): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const tasks = await readdir(`/proc/${pid}/task`);
    const states = await Promise.all(
      tasks.map(async (task) => {
        const stat = await readFile(`/proc/${pid}/task/${task}/stat`, 'utf8').catch(() => ') X');
        return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      }),
    );
    if (states.every((state) => state === 'T' || state === 'X')) return;
    if (Date.now() > deadline) throw new Error(`mysqld ${pid} not stopped: ${states.join('')}`);
    await sleep(10);
  }
}

test('MySQL frozen (SIGSTOP): a one-row read, /health and other requests answer 503 while it is frozen, and 200 once it thaws', async () => {
  const pid = Number(await readFile(path.join(path.dirname(server.dataDir), 'mysql.pid'), 'utf8'));
  expect((await fetch(`${gw.url}/health`)).status).toBe(200);
  // Idle pool connections exist now: a request takes one and its statement meets the frozen server.
  process.kill(pid, 'SIGSTOP');
  let alone: Outcome;
  let frozen: Outcome[];
  try {
    // The requests go out once every thread of mysqld has stopped: a thread still running on
    // the other core could answer the health ping (a loaded CI machine saw a 200 here).
    await untilStopped(pid);
    // Alone first: no /health ping already in flight shortens its wait.
    alone = await request('read', '/table/items/read?$top=1', {}, undefined, FROZEN_HANG_MS);
    frozen = await Promise.all([
      request('health', '/health', {}, undefined, FROZEN_HANG_MS),
      request('read', '/table/items/read?$top=1', {}, undefined, FROZEN_HANG_MS),
      request('read', '/table/items/read?$top=1&$count=true', {}, undefined, FROZEN_HANG_MS),
      request(
        'create',
        '/table/items/create',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ k: 'frozen', n: 1 }),
        },
        'frozen',
        FROZEN_HANG_MS,
      ),
    ]);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  // Every answer came while mysqld was still stopped (SIGCONT is sent only once all are in): the
  // gateway gave up on the frozen server by itself, which never refuses and never answers. The
  // bounds it does so within are constants, checked here; the times are printed below. By
  // construction the 503 comes after STATEMENT_ALIVE_CHECK_MS (the statement is overdue) + at
  // most WATCHDOG_TICK_MS (the watchdog looks) + HEALTH_TIMEOUT_MS (the ping gives up) = 1.75 s,
  // or, when the read must wait for a new connection, ALIVE_CHECK_MS + WAIT_SWEEP_MS +
  // HEALTH_TIMEOUT_MS = 2.1 s (acquire.ts); 1.5–1.75 s were measured here.
  expect(STATEMENT_ALIVE_CHECK_MS + WATCHDOG_TICK_MS + HEALTH_TIMEOUT_MS).toBeLessThan(2000);
  expect(ALIVE_CHECK_MS + WAIT_SWEEP_MS + HEALTH_TIMEOUT_MS).toBeLessThan(2200);
  expect([alone.status, alone.body]).toEqual([503, UNAVAILABLE]);
  const [health, ...others] = frozen;
  expect([health?.status, health?.body]).toEqual([503, { status: 'unavailable' }]);
  for (const outcome of others) {
    // The create's INSERT was sent before the server froze: whether it is applied when it thaws
    // is unknown, so it is answered as such and not retried (execute/retry.ts).
    const expected = outcome.kind === 'create' ? OUTCOME_UNKNOWN : UNAVAILABLE;
    expect([outcome.kind, outcome.status, outcome.body]).toEqual([outcome.kind, 503, expected]);
  }
  const deadline = Date.now() + THAW_MAX_MS;
  let status = 0;
  while (status !== 200 && Date.now() < deadline) {
    status = (await fetch(`${gw.url}/table/items/read?$top=1`)).status;
    if (status !== 200) await sleep(100);
  }
  expect(status).toBe(200);
  console.log(
    `frozen MySQL: a read alone 503 in ${alone.end - alone.start} ms; then ${frozen.map((o) => `${o.kind} ${o.status} in ${o.end - o.start} ms`).join(', ')}`,
  );
}, 30_000);

test('a busy but live server is never taken for a frozen one: long statements, a full pool, a slow big read all answer 200', async () => {
  const admin = await rootConnection(server);
  await admin.query(`
    USE ${DATABASE};
    CREATE TABLE wide (id INT PRIMARY KEY, pad CHAR(200) NOT NULL);
    INSERT INTO wide SELECT seq, REPEAT('x', 200) FROM seq_1_to_${WIDE_ROWS};
  `);
  // The gateway learns the new table now: its schema read would wait for the lock below.
  expect((await request('read', '/table/wide/read?$top=1')).status).toBe(200);
  // The server's CPUs taken by statements of other clients, for the whole test: the pings the
  // watchdog and the waiting requests send must still be answered in time.
  const hogs = await Promise.all(Array.from({ length: 6 }, () => rootConnection(server)));
  for (const hog of hogs) hog.query('SELECT BENCHMARK(2000000000, MD5(RAND()))').catch(() => {});
  const locker = await rootConnection(server);
  try {
    // Every statement on items waits for the lock: the pool's 4 connections are busy far past
    // STATEMENT_ALIVE_CHECK_MS, and the requests behind them wait past ALIVE_CHECK_MS.
    await locker.query(`LOCK TABLES ${DATABASE}.items WRITE`);
    // The big read holds one connection from before the others come (its rows are flowing).
    const slowRead = await readSlowly('/table/wide/read?$orderby=id');
    const blocked = [
      ...Array.from({ length: 8 }, () => request('read', '/table/items/read?$top=1')),
      ...[1, 2].map((i) =>
        request('create', '/table/items/create', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ k: `busy-${i}`, n: i }),
        }),
      ),
    ];
    await sleep(LOCKED_MS);
    const unlocked = Date.now();
    await locker.query('UNLOCK TABLES');
    const outcomes = await Promise.all(blocked);
    const slow = await slowRead.finished;
    expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
    // Each waited for the lock (answered after it was released), for LOCKED_MS: long enough for
    // the watchdog to have asked several times, and not taken for a frozen server.
    expect(outcomes.filter((o) => o.end < unlocked)).toEqual([]);
    expect([slow.status, slow.rows]).toEqual([200, WIDE_ROWS]);
    expect(slow.ms).toBeGreaterThan(2 * HEALTH_TIMEOUT_MS);
    console.log(
      `busy but live: ${outcomes.length} requests held ${LOCKED_MS} ms by a lock, all 200 (slowest ${Math.max(...outcomes.map((o) => o.end - o.start))} ms); a read of ${WIDE_ROWS} rows taken slowly over ${slow.ms} ms, 200`,
    );
  } finally {
    await locker.end();
    for (const hog of hogs) hog.destroy();
    await admin.query('DROP TABLE wide');
    await admin.end();
  }
}, 60_000);

test('a gateway too busy to look in time does not take a late answer for silence', async () => {
  expect(await gw.gateway.db.ping(true)).toBe(true); // the control connection is open
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const answer = gw.gateway.db.ping(true);
  await new Promise((resolve) => setImmediate(resolve)); // the ping is on the wire
  // The event loop held past the ping's bound, as by a long synchronous task or a starved
  // process: the server's answer arrives meanwhile and waits in the socket, behind the timer.
  Atomics.wait(cell, 0, 0, HEALTH_TIMEOUT_MS + 500);
  expect(await answer).toBe(true);
});

/**
 * A streamed read whose client takes a chunk every 40 ms: slow, never stalled. Resolves once the
 * answer has begun; `finished` once it is read whole.
 */
async function readSlowly(
  path: string,
): Promise<{ finished: Promise<{ status: number; rows: number; ms: number }> }> {
  const start = Date.now();
  const response = await fetch(`${gw.url}${path}`);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const finished = (async () => {
    const decoder = new TextDecoder();
    let text = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      await sleep(40);
    }
    const rows = JSON.parse(text) as unknown[];
    return { status: response.status, rows: rows.length, ms: Date.now() - start };
  })();
  return { finished };
}

function isEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Array.prototype.findLastIndex is ES2023; the project targets ES2022. */
function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i] as T)) return i;
  return -1;
}
