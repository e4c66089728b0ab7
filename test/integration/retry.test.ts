/**
 * Retries (docs/operations.md, execute/retry.ts) against the real server: a write the server rolled
 * back whole (deadlock, Galera certification failure) or refused (a Galera node without quorum,
 * 1047) is tried again up to WRITE_ATTEMPTS times; a read once. The errors are the server's own:
 * triggers and functions SIGNAL them, gated by counters in a MyISAM table (which keeps its
 * changes when the transaction around it rolls back), so they fire for the first N attempts
 * only. Connections are broken with KILL CONNECTION from the test, between requests and while a
 * statement waits on a row lock the test holds: before the COMMIT the write is retried, after the
 * autocommit statement was sent it answers WRITE_OUTCOME_UNKNOWN and is never retried.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { MYSQL_ERRORS } from '../../src/errors.js';
import { WRITE_ATTEMPTS } from '../../src/limits.js';
import { createTestDatabase, integers, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { testServer } from '../helpers/mysql-url.js';

const DEADLOCK =
  "SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'Deadlock found when trying to get lock; try restarting transaction'";
const NOT_READY =
  "SIGNAL SQLSTATE '08S01' SET MYSQL_ERRNO = 1047, MESSAGE_TEXT = 'WSREP has not yet prepared node for application use'";
const LOCK_WAIT =
  "SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 1205, MESSAGE_TEXT = 'Lock wait timeout exceeded; try restarting transaction'";

/** `fail(name, signal)`: raise `signal` while the budget `name` is above 0, spending one. */
const gate = (name: string, signal: string) => `
  IF (SELECT n FROM budget WHERE name = '${name}') > 0 THEN
    UPDATE budget SET n = n - 1 WHERE name = '${name}';
    ${signal};
  END IF;`;

const FIXTURE = `
CREATE TABLE budget (name VARCHAR(20) PRIMARY KEY, n INT NOT NULL) ENGINE=MyISAM;
INSERT INTO budget VALUES ('deadlock', 0), ('late_deadlock', 0), ('not_ready', 0),
  ('lock_wait', 0), ('read_not_ready', 0), ('read_sleep', 0), ('late_sleep', 0);
-- No unique key on k: a write stored twice would show as two rows.
CREATE TABLE events (id INT AUTO_INCREMENT PRIMARY KEY, k VARCHAR(40) NOT NULL, n INT NOT NULL) ENGINE=InnoDB;
CREATE TRIGGER events_gate BEFORE INSERT ON events FOR EACH ROW BEGIN
  ${gate('deadlock', DEADLOCK)}
  IF NEW.k LIKE 'late-%' THEN ${gate('late_deadlock', DEADLOCK)} END IF;
  ${gate('not_ready', NOT_READY)}
  ${gate('lock_wait', LOCK_WAIT)}
END;
CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20) NOT NULL) ENGINE=InnoDB;
INSERT INTO items (name) VALUES ('tea'), ('coffee');
-- A trigger that does nothing: its table's writes take the transaction path (plan/exact-write.ts).
CREATE TABLE slots (id INT PRIMARY KEY, label VARCHAR(20) NOT NULL) ENGINE=InnoDB;
CREATE TRIGGER slots_noop BEFORE INSERT ON slots FOR EACH ROW SET NEW.label = NEW.label;
-- No trigger: an exact insert runs under autocommit.
CREATE TABLE notes (id INT PRIMARY KEY, body VARCHAR(20) NOT NULL) ENGINE=InnoDB;
CREATE FUNCTION read_gate() RETURNS INT NOT DETERMINISTIC MODIFIES SQL DATA BEGIN
  ${gate('read_not_ready', NOT_READY)}
  IF (SELECT n FROM budget WHERE name = 'read_sleep') > 0 THEN
    UPDATE budget SET n = n - 1 WHERE name = 'read_sleep';
    DO SLEEP(30);
  END IF;
  RETURN 1;
END;
CREATE VIEW gated_items AS SELECT id, name FROM items WHERE read_gate() = 1;
-- 3000 rows of ~220 bytes: row 2500 comes long after the response began (64 KiB).
CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(200) NOT NULL) ENGINE=InnoDB;
INSERT INTO big SELECT seq, REPEAT('x', 200) FROM ${integers(3000)};
CREATE FUNCTION late_gate(row_id INT) RETURNS INT NOT DETERMINISTIC MODIFIES SQL DATA BEGIN
  IF row_id = 2500 AND (SELECT n FROM budget WHERE name = 'late_sleep') > 0 THEN
    UPDATE budget SET n = n - 1 WHERE name = 'late_sleep';
    DO SLEEP(30);
  END IF;
  RETURN 1;
END;
CREATE VIEW late_items AS SELECT id, pad FROM big WHERE late_gate(id) = 1;
`;

const HANG_MS = 10_000;

let db: TestDatabase;
let gateway: TestGateway;
/** A second connection: holds row locks while the first checks and kills. */
let locker: mysql.Connection;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  gateway = await startTestGateway(db.name);
  locker = await mysql.createConnection({ ...testServer(), database: db.name });
});

afterAll(async () => {
  await locker?.end();
  await gateway?.close();
  await db?.drop();
});

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

async function send(path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${gateway.url}${path}`, {
    ...init,
    signal: AbortSignal.timeout(HANG_MS),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as unknown };
}

const create = (table: string, body: unknown) =>
  send(`/table/${table}/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

async function setBudget(name: string, n: number): Promise<void> {
  await db.admin.query('UPDATE budget SET n = ? WHERE name = ?', [n, name]);
}

async function budgetLeft(name: string): Promise<number> {
  const [rows] = await db.admin.query<RowDataPacket[]>('SELECT n FROM budget WHERE name = ?', [
    name,
  ]);
  return Number(rows[0]?.n);
}

async function stored(table: string, where: string, params: unknown[]): Promise<unknown[]> {
  const [rows] = await db.admin.query<RowDataPacket[]>(
    `SELECT * FROM ${table} WHERE ${where} ORDER BY id`,
    params,
  );
  return rows.map((row) => ({ ...row }));
}

const inserted = (insertId: number | null, affectedRows: number) => ({
  success: true,
  message: 'Data inserted successfully',
  insertId,
  affectedRows,
});

const UNAVAILABLE = {
  success: false,
  message: 'Database unavailable',
  code: 'DATABASE_UNAVAILABLE',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `find` returns a value (a thread id), or fails after HANG_MS. */
async function waitFor<T>(what: string, find: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + HANG_MS;
  while (Date.now() < deadline) {
    const found = await find();
    if (found !== undefined) return found;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * The thread of the gateway's INSERT waiting for a row lock, other than `not`: one running for
 * over 100 ms (it takes well under one otherwise). INNODB_TRX would say so directly, but MariaDB
 * 10.11 left the waiting transaction out of it here at times.
 */
async function lockWaiter(not: readonly number[] = []): Promise<number | undefined> {
  const [rows] = await db.admin.query<RowDataPacket[]>(
    "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ? AND INFO LIKE 'INSERT%' AND TIME_MS > 100",
    [db.name],
  );
  return rows.map((row) => Number(row.id)).find((id) => !not.includes(id));
}

/** The gateway's connections to the test database (everything but the test's own two). */
async function gatewayConnections(): Promise<number[]> {
  const [own] = await locker.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
  const [rows] = await db.admin.query<RowDataPacket[]>(
    'SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ? AND ID NOT IN (CONNECTION_ID(), ?)',
    [db.name, own[0]?.id],
  );
  return rows.map((row) => Number(row.id));
}

async function kill(threadId: number): Promise<void> {
  await db.admin.query('KILL CONNECTION ?', [threadId]);
}

describe('a write the server rolled back whole is tried again', () => {
  test(`deadlocked ${WRITE_ATTEMPTS - 1} times, then stored: 200, the row exactly once`, async () => {
    await setBudget('deadlock', WRITE_ATTEMPTS - 1);
    const answer = await create('events', { k: 'deadlock-then-ok', n: 1 });
    const rows = await stored('events', 'k = ?', ['deadlock-then-ok']);
    expect(answer).toEqual({ status: 200, body: inserted((rows[0] as { id: number }).id, 1) });
    expect(rows).toEqual([{ id: expect.any(Number), k: 'deadlock-then-ok', n: 1 }]);
    expect(await budgetLeft('deadlock')).toBe(0);
  });

  test(`deadlocked on every one of ${WRITE_ATTEMPTS} attempts: 409 ER_LOCK_DEADLOCK, nothing stored, no fourth try`, async () => {
    await setBudget('deadlock', WRITE_ATTEMPTS + 2);
    const answer = await create('events', { k: 'always-deadlocked', n: 1 });
    expect(answer).toEqual({
      status: 409,
      body: {
        success: false,
        message: MYSQL_ERRORS.ER_LOCK_DEADLOCK?.message,
        code: 'ER_LOCK_DEADLOCK',
      },
    });
    expect((answer.body as { message: string }).message).toBe(
      `The write collided with other transactions (a deadlock, or on a cluster a write on another node) ${WRITE_ATTEMPTS} times and was rolled back each time; nothing was written, try again`,
    );
    expect(await stored('events', 'k = ?', ['always-deadlocked'])).toEqual([]);
    expect(await budgetLeft('deadlock')).toBe(2);
    await setBudget('deadlock', 0);
  });

  test('a batch whose second row deadlocks: the first row is not kept from the failed attempt, both stored once', async () => {
    await setBudget('late_deadlock', 1);
    const answer = await create('events', [
      { k: 'batch-first', n: 1 },
      { k: 'late-second', n: 2 },
    ]);
    const rows = await stored('events', 'k IN (?, ?)', ['batch-first', 'late-second']);
    expect(rows).toEqual([
      { id: expect.any(Number), k: 'batch-first', n: 1 },
      { id: expect.any(Number), k: 'late-second', n: 2 },
    ]);
    expect(answer).toEqual({ status: 200, body: inserted((rows[0] as { id: number }).id, 2) });
    expect(await budgetLeft('late_deadlock')).toBe(0);
  });

  test('a Galera node without quorum (1047) refused once: 200 on a fresh connection, stored once', async () => {
    const before = await gatewayConnections();
    await setBudget('not_ready', 1);
    const answer = await create('events', { k: 'not-ready-once', n: 1 });
    const rows = await stored('events', 'k = ?', ['not-ready-once']);
    expect(answer).toEqual({ status: 200, body: inserted((rows[0] as { id: number }).id, 1) });
    expect(rows).toHaveLength(1);
    // The connection that led to the refusing node was dropped, not given back to the pool.
    const after = await gatewayConnections();
    expect(before.filter((id) => !after.includes(id))).toHaveLength(1);
  });

  test(`refused by 1047 on all ${WRITE_ATTEMPTS} attempts: 503 DATABASE_UNAVAILABLE, nothing stored`, async () => {
    await setBudget('not_ready', WRITE_ATTEMPTS);
    const answer = await create('events', { k: 'never-ready', n: 1 });
    expect(answer).toEqual({ status: 503, body: UNAVAILABLE });
    expect(await stored('events', 'k = ?', ['never-ready'])).toEqual([]);
    expect(await budgetLeft('not_ready')).toBe(0);
  });

  test('a lock wait timeout is not retried (it would wait as long again): 409 after one attempt', async () => {
    await setBudget('lock_wait', 3);
    const answer = await create('events', { k: 'lock-wait', n: 1 });
    expect(answer).toEqual({
      status: 409,
      body: {
        success: false,
        message:
          'The rows are locked by another transaction and the wait timed out; nothing was written, try again',
        code: 'ER_LOCK_WAIT_TIMEOUT',
      },
    });
    expect(await budgetLeft('lock_wait')).toBe(2);
    await setBudget('lock_wait', 0);
  });

  test('a real deadlock with another transaction: the gateway, the lighter one, is rolled back and retried: 200, stored once', async () => {
    // The locker's transaction changed 50 rows: InnoDB picks the lighter transaction (the
    // gateway's) as the deadlock victim.
    await locker.query('BEGIN');
    await locker.query('INSERT INTO items (name) SELECT CONCAT(name, "-heavy") FROM items LIMIT 2');
    for (let i = 0; i < 48; i++) await locker.query("INSERT INTO items (name) VALUES ('heavy')");
    await locker.query("INSERT INTO notes (id, body) VALUES (102, 'locker')");
    // The gateway inserts 101 (locked by it), then waits for 102 (the locker's).
    const answering = create('notes', [
      { id: 101, body: 'gateway' },
      { id: 102, body: 'gateway' },
    ]);
    const waiter = await waitFor('the gateway to wait for row 102', () => lockWaiter());
    // The locker now wants 101: a cycle; InnoDB rolls the gateway's transaction back.
    const lockerInsert = locker.query("INSERT INTO notes (id, body) VALUES (101, 'locker')");
    await lockerInsert; // succeeds once the victim's lock on 101 is gone
    // The gateway's retry now waits behind the locker: let it through.
    await waitFor('the retry to wait', () => lockWaiter());
    await locker.query('ROLLBACK');
    const answer = await answering;
    expect(answer).toEqual({ status: 200, body: inserted(null, 2) });
    expect(await stored('notes', 'id IN (101, 102)', [])).toEqual([
      { id: 101, body: 'gateway' },
      { id: 102, body: 'gateway' },
    ]);
    expect(waiter).toBeGreaterThan(0);
  });
});

/** The gateway's statement sleeping in a gated function (its thread id), once there is one. */
async function sleeper(): Promise<number | undefined> {
  const [rows] = await db.admin.query<RowDataPacket[]>(
    "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ? AND STATE = 'User sleep'",
    [db.name],
  );
  return rows[0] === undefined ? undefined : Number(rows[0].id);
}

describe('a broken connection', () => {
  test('killed between requests: the next read, count and write are served', async () => {
    expect((await send('/table/items/read?$top=1')).status).toBe(200);
    const threads = await gatewayConnections();
    expect(threads.length).toBeGreaterThan(0);
    for (const thread of threads) await kill(thread);
    const read = await send('/table/items/read?$select=name&$orderby=id&$top=2&$count=true');
    expect(read).toEqual({ status: 200, body: [{ name: 'tea' }, { name: 'coffee' }] });
    for (const thread of await gatewayConnections()) await kill(thread);
    const answer = await create('events', { k: 'after-kill', n: 1 });
    const rows = await stored('events', 'k = ?', ['after-kill']);
    expect(answer).toEqual({ status: 200, body: inserted((rows[0] as { id: number }).id, 1) });
    expect(rows).toHaveLength(1);
  });

  test('killed while a transactional insert waits for a lock (before COMMIT): retried on a fresh connection, stored once', async () => {
    await locker.query('BEGIN');
    await locker.query("INSERT INTO slots (id, label) VALUES (7, 'locker')");
    const answering = create('slots', { id: 7, label: 'gateway' });
    const first = await waitFor('the insert to wait', () => lockWaiter());
    await kill(first);
    // The retry waits for the same lock, on another connection.
    const second = await waitFor('the retry to wait', () => lockWaiter([first]));
    await locker.query('ROLLBACK');
    expect(await answering).toEqual({ status: 200, body: inserted(null, 1) });
    expect(await stored('slots', 'id = 7', [])).toEqual([{ id: 7, label: 'gateway' }]);
    expect(second).not.toBe(first);
  });

  test('killed while an autocommit insert is in flight: 503 WRITE_OUTCOME_UNKNOWN, and no retry', async () => {
    await locker.query('BEGIN');
    await locker.query("INSERT INTO notes (id, body) VALUES (8, 'locker')");
    const answering = create('notes', { id: 8, body: 'gateway' });
    const waiter = await waitFor('the insert to wait', () => lockWaiter());
    await kill(waiter);
    // Answered while the lock is still held: a retry would still be waiting for it. (The killed
    // thread may linger in the process list for a moment.)
    const answer = await answering;
    expect(await lockWaiter([waiter])).toBeUndefined();
    await locker.query('ROLLBACK');
    expect(answer).toEqual({
      status: 503,
      body: {
        success: false,
        message:
          'The connection to the database was lost while the write was committing; it may or may not have been applied. Read the rows before retrying',
        code: 'WRITE_OUTCOME_UNKNOWN',
      },
    });
    expect(await stored('notes', 'id = 8', [])).toEqual([]);
  });

  test('killed while a read runs, before its first row: read again on a fresh connection', async () => {
    await setBudget('read_sleep', 1);
    const answering = send('/table/gated_items/read?$select=name&$orderby=id');
    await kill(await waitFor('the read to sleep', sleeper));
    expect(await answering).toEqual({ status: 200, body: [{ name: 'tea' }, { name: 'coffee' }] });
  });

  test('a read killed after its first rows were sent: the response is cut at once, not retried, and the next read is served', async () => {
    await setBudget('late_sleep', 1);
    const response = await fetch(`${gateway.url}/table/late_items/read`, {
      signal: AbortSignal.timeout(HANG_MS),
    });
    expect(response.status).toBe(200);
    const body = response.text();
    await kill(await waitFor('the read to sleep at row 2500', sleeper));
    // Cut by the gateway ('terminated'), not ended by this client's own HANG_MS timeout.
    await expect(body).rejects.toThrow('terminated');
    expect(await budgetLeft('late_sleep')).toBe(0);
    expect(await send('/table/late_items/read?$select=id&$top=1')).toEqual({
      status: 200,
      body: [{ id: 1 }],
    });
  });
});

describe('a read refused by a Galera node without quorum (1047)', () => {
  test('once: read again, 200; a $count too', async () => {
    await setBudget('read_not_ready', 1);
    expect(await send('/table/gated_items/read?$select=name&$orderby=id')).toEqual({
      status: 200,
      body: [{ name: 'tea' }, { name: 'coffee' }],
    });
    await setBudget('read_not_ready', 1);
    const counted = await fetch(`${gateway.url}/table/gated_items/read?$select=id&$count=true`);
    expect([counted.status, counted.headers.get('x-total-count')]).toEqual([200, '2']);
    expect(await budgetLeft('read_not_ready')).toBe(0);
  });

  test('twice: 503 DATABASE_UNAVAILABLE after the one retry', async () => {
    await setBudget('read_not_ready', 3);
    expect(await send('/table/gated_items/read')).toEqual({ status: 503, body: UNAVAILABLE });
    expect(await budgetLeft('read_not_ready')).toBe(1);
    await setBudget('read_not_ready', 0);
  });
});
