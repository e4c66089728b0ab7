/**
 * The differential test of the change feed (docs/changes.md, "Who sees what"): what
 * each subscriber is sent equals what its own reads tell apart. Every subscriber — a caller
 * (anonymous, two users whose emails differ only by an accent, a role with hidden
 * columns, a role with functions in its `where`) with a random `$filter` and `$select` — is
 * read through `GET /table/items/read` with the same options before and after each of a
 * seeded series of transactions written by a plain mysql2 client; a row in both reads is an
 * `update` carrying the row exactly as the read answers it, in the after read only an
 * `insert`, in the before read only a `delete` with its key. The events sent must be exactly
 * those, byte for byte, in the transaction's order. FUZZ_SEED=<n> replays a run.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { ExactNumber, parseExact } from '../helpers/exact-json.js';
import { seededRandom } from '../helpers/fault-proxy.js';
import {
  COLUMNS,
  grammarFilters,
  ITEMS_TABLE,
  type ItemRow,
  insertOf,
  randomFilter,
  randomRow,
  randomSelect,
  randomTransaction,
} from '../helpers/feed-workload.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';
import { signUpAs, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startBinlogDatabase } from '../helpers/private-servers.js';
import { openStream, type RawStream, splitJsonArray } from '../helpers/sse-stream.js';

const SEED = fuzzSeed();
/** Transactions are written until this many rows have changed. */
const ROW_CHANGES = 220;
const FILTERED_PER_CALLER = 4;
const GRAMMAR_FILTERS_PER_CALLER = 1;

const visibleTo = {
  anonymous: ['id', 'name', 'qty', 'price', 'due', 'kind', 'active', 'code', 'total'],
  user: COLUMNS.filter((c) => c !== 'secret'),
  auditor: COLUMNS.filter((c) => c !== 'secret' && c !== 'price'),
  fn: COLUMNS.filter((c) => c !== 'secret' && c !== 'owner'),
} as const;

const POLICY = {
  roles: {
    anonymous: {
      tables: {
        items: {
          read: { where: "active eq true and kind ne 'blue'", columns: visibleTo.anonymous },
        },
      },
    },
    user: {
      tables: {
        items: {
          read: {
            where:
              "owner eq @user.email or uid eq @user.id or (kind eq 'green' and endswith(owner, @user.email))",
            columns: visibleTo.user,
          },
        },
      },
    },
    auditor: {
      tables: { items: { read: { columns: visibleTo.auditor } }, big_rows: { read: true } },
    },
    fn: {
      tables: {
        items: {
          read: {
            where: "contains(tolower(name), 'e') or year(due) eq 2025 or month(seen) ge 6",
            columns: visibleTo.fn,
          },
        },
      },
    },
  },
};
/** What every user's subscriber of one kind asks for (their reads differ by `@user` only). */
const SHARED_USER_OPTIONS = { filter: "qty ge 2 or name eq 'apple'", select: 'id,owner,name,qty' };
const SECRET = 'changes-differential-secret-0123456789abcdefghij';
const PASSWORD = 'correct horse battery';

interface Caller {
  readonly name: string;
  readonly role: keyof typeof visibleTo;
  readonly email: string | null;
  headers: Record<string, string>;
  /** Its user id, once signed up. */
  id?: string;
  /** Only the options every user shares (more users of one role, decided together). */
  readonly few?: boolean;
}

const CALLERS: Caller[] = [
  { name: 'anonymous', role: 'anonymous', email: null, headers: {} },
  { name: 'ann', role: 'user', email: 'ann@example.com', headers: {} },
  // Differs from ann's only by an accent: a *_ci collation calls them equal, @user not.
  // (Registration lower-cases emails; owners that differ from both by case are in the rows.)
  { name: 'ánn', role: 'user', email: 'ánn@example.com', headers: {} },
  // More users of one role: subscribers of the same options and other `@user` values are
  // decided in one statement (a branch each), and must each get their own rows only.
  { name: 'bob', role: 'user', email: 'bob@example.com', headers: {}, few: true },
  { name: 'xann', role: 'user', email: 'xann@example.com', headers: {}, few: true },
  { name: 'nobody', role: 'user', email: 'nobody@example.com', headers: {}, few: true },
  { name: 'auditor', role: 'auditor', email: 'audit@example.com', headers: {} },
  { name: 'fn', role: 'fn', email: 'fn@example.com', headers: {} },
];

/** A row as a read answers it, and its key as the feed sends it. */
interface Seen {
  readonly row: string;
  readonly key: string;
}

interface Subscriber {
  readonly caller: Caller;
  readonly filter: string | null;
  readonly select: string | null;
  stream: RawStream;
  /** The events it must have been sent so far (data text, the commit time left as `AT`). */
  readonly expected: { event: string; data: string }[];
  /** Its rows by id as its read answers now. */
  rows: Map<string, Seen>;
}

const describeSubscriber = (s: Subscriber) =>
  `${s.caller.name} $filter=${s.filter ?? '(none)'} $select=${s.select ?? '(none)'}`;

let server: PrivateServer;
let writer: mysql.Connection;
let gw: TestGateway;
let dir: string;
const DB = `changes_diff_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  ({ server, writer } = await startBinlogDatabase(DB, ITEMS_TABLE));
  await writer.query('CREATE TABLE other (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))');
  await writer.query('CREATE TABLE big_rows (id INT PRIMARY KEY, body LONGTEXT NOT NULL)');
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-changes-diff-'));
  const policyFile = path.join(dir, 'policy.json');
  await writeFile(policyFile, JSON.stringify(POLICY));
  gw = await startTestGateway(DB, {
    db: {
      host: server.host,
      port: server.port,
      user: server.user,
      password: server.password,
      database: DB,
      poolSize: 4,
    },
    mode: 'auth',
    jwtSecret: SECRET,
    policyFile,
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
  });
  for (const caller of CALLERS) {
    if (caller.email === null) continue;
    const { token, id } = await signUpAs(
      gw.url,
      writer,
      { email: caller.email, password: PASSWORD },
      caller.role,
    );
    caller.headers = { authorization: `Bearer ${token}` };
    caller.id = id;
  }
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await writer?.end();
  await server?.destroy();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function query(subscriber: Pick<Subscriber, 'filter' | 'select'>, select = subscriber.select) {
  const parts: string[] = [];
  if (subscriber.filter !== null) parts.push(`$filter=${encodeURIComponent(subscriber.filter)}`);
  if (select !== null) parts.push(`$select=${encodeURIComponent(select)}`);
  return parts.join('&');
}

async function readText(
  caller: Caller,
  options: string,
  table = 'items',
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${gw.url}/table/${table}/read?${options}`, {
    headers: caller.headers,
  });
  return { status: response.status, text: await response.text() };
}

/** The subscriber's rows as its own read answers them now, by id. */
async function readRows(subscriber: Subscriber): Promise<Map<string, Seen>> {
  const order = '$orderby=id';
  const own = await readText(subscriber.caller, `${query(subscriber)}&${order}`);
  if (own.status !== 200) throw new Error(`read ${describeSubscriber(subscriber)}: ${own.text}`);
  const rows = splitJsonArray(own.text);
  const keyed = subscriber.select === null || subscriber.select.split(',').includes('id');
  // A $select without the key: the same read's ids, in the same order, name the rows.
  const ids = keyed
    ? rows
    : splitJsonArray(
        (await readText(subscriber.caller, `${query(subscriber, 'id')}&${order}`)).text,
      );
  if (ids.length !== rows.length) throw new Error('the key read disagrees with the read');
  const seen = new Map<string, Seen>();
  rows.forEach((row, i) => {
    const id = (parseExact(ids[i] as string) as { id: ExactNumber }).id.text;
    seen.set(id, { row, key: `{"id":${id}}` });
  });
  return seen;
}

/** Runs `tasks` a few at a time (the gateway's pool has 4 connections). */
async function inParallel<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: 6 }, worker));
}

async function waitFor(condition: () => boolean, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return true;
}

/** The GTID of the writer's last transaction (MariaDB). */
async function lastGtid(): Promise<string> {
  const [rows] = (await writer.query('SELECT @@last_gtid AS gtid')) as unknown as [
    { gtid: string }[],
  ];
  return String(rows[0]?.gtid);
}

/** The event's data with its commit time replaced by `AT` (checked on its own). */
const withoutTime = (data: string) => data.replace(/,"at":"[^"]*","tx":/, ',"at":"AT","tx":');

/** One row a transaction changed: by its id, or an update of its key. */
type RowChange = { readonly id: number } | { readonly rekey: readonly [number, number] };

/** The rows with `ids` as the database holds them, by id, as comparable text. */
async function storedRows(ids: readonly number[]): Promise<Map<number, string>> {
  const [rows] = (await writer.query(
    'SELECT id, HEX(CONCAT_WS(0x1F, owner, name, qty, price, ratio, due, seen, kind, active, secret, meta, code, f, ts, bin, tags, tm, big, tm3, y, bits, uid)) AS k, ISNULL(name) AS a, ISNULL(qty) AS b, ISNULL(price) AS c, ISNULL(ratio) AS d, ISNULL(due) AS e, ISNULL(seen) AS f, ISNULL(kind) AS g, ISNULL(active) AS h, ISNULL(secret) AS i, ISNULL(meta) AS j, ISNULL(code) AS l, ISNULL(f) AS m, ISNULL(ts) AS n, ISNULL(bin) AS o, ISNULL(tags) AS p, ISNULL(tm) AS q, ISNULL(big) AS r, ISNULL(tm3) AS s, ISNULL(y) AS t, ISNULL(bits) AS u, ISNULL(uid) AS v FROM items WHERE id IN (?)',
    [ids],
  )) as unknown as [Record<string, unknown>[]];
  return new Map(rows.map((row) => [Number(row.id), JSON.stringify(row)]));
}

/**
 * The events a subscriber must get for a transaction's changes, from its reads before and
 * after: in both an update with the row as read after it, after only an insert, before only a
 * delete with the key. A row whose key changed left its old key and came in at its new one.
 */
function expectedEvents(
  before: Map<string, Seen>,
  after: Map<string, Seen>,
  changed: readonly RowChange[],
  tx: string,
): { event: string; data: string }[] {
  const tail = `"at":"AT","tx":${tx}}`;
  const event = (op: string, seen: Seen, row: boolean) => ({
    event: op,
    data: `{"op":"${op}","table":"items","key":${seen.key}${row ? `,"row":${seen.row}` : ''},${tail}`,
  });
  const events: { event: string; data: string }[] = [];
  for (const change of changed) {
    const [from, to] = 'rekey' in change ? change.rekey : [change.id, change.id];
    const was = before.get(String(from));
    const is = after.get(String(to));
    if (was !== undefined && is !== undefined && from === to)
      events.push(event('update', is, true));
    else {
      if (was !== undefined) events.push(event('delete', was, false));
      if (is !== undefined) events.push(event('insert', is, true));
    }
  }
  return events;
}

/**
 * Waits until the sentinel (it sees every row) has its `count` events of `tx` — the hub then
 * has sent every subscriber its events of it, in one loop — and the others theirs, then
 * compares every subscriber's events with what it must have got.
 */
async function settled(
  subscribers: readonly Subscriber[],
  tx: string,
  count: number,
  what: string,
): Promise<void> {
  const sentinel = subscribers[0] as Subscriber;
  const arrived = await waitFor(
    () => sentinel.stream.events.filter((e) => e.data.endsWith(`"tx":${tx}}`)).length >= count,
  );
  await waitFor(() => subscribers.every((s) => s.stream.events.length >= s.expected.length), 2_000);
  const mismatches: string[] = [];
  for (const s of subscribers) {
    const got = s.stream.events.map((e) => ({ event: e.event, data: withoutTime(e.data) }));
    if (JSON.stringify(got) !== JSON.stringify(s.expected)) {
      const from = Math.max(0, s.expected.length - count - 2);
      mismatches.push(
        `${describeSubscriber(s)}\n  expected ${JSON.stringify(s.expected.slice(from), null, 1)}\n  got ${JSON.stringify(got.slice(from), null, 1)}`,
      );
    }
  }
  if (!arrived || mismatches.length > 0) {
    throw new Error(
      `FUZZ_SEED=${SEED}, ${what}${arrived ? '' : '\n(the sentinel never had it)'}\n${mismatches.join('\n')}`,
    );
  }
}

test('every subscriber is sent exactly what its reads before and after each transaction differ by', async () => {
  const started = Date.now();
  const random = seededRandom(SEED);
  console.log(`changes-differential: FUZZ_SEED=${SEED}`);
  const table = await gw.gateway.schema.find('items');
  if (table === undefined) throw new Error('items is not in the schema');

  // The table before anyone subscribes.
  const model = new Map<number, ItemRow>();
  let lastId = 0;
  const nextId = () => ++lastId;
  for (let i = 0; i < 25; i++) {
    const row = randomRow(random, nextId());
    model.set(row.id as number, row);
    const { sql, params } = insertOf(row);
    await writer.query(sql, [...params]);
  }

  // Subscribers: each caller without options, and with random filters and selections.
  const subscribers: Subscriber[] = [];
  const refused: string[] = [];
  let filters = 0;
  for (const caller of CALLERS) {
    const visible = visibleTo[caller.role];
    const options: { filter: string | null; select: string | null }[] = [
      { filter: null, select: null },
    ];
    // The same options for every user: one read with each user's values.
    if (caller.role === 'user') options.push(SHARED_USER_OPTIONS);
    if (caller.few === true) {
      for (const option of options) {
        const stream = await openStream(
          `${gw.url}/table/items/changes?${query(option)}`,
          caller.headers,
        );
        if (stream.status !== 200) throw new Error(`${caller.name}: ${stream.body}`);
        subscribers.push({ caller, ...option, stream, expected: [], rows: new Map() });
      }
      continue;
    }
    for (let i = 0; i < FILTERED_PER_CALLER; i++) {
      options.push({
        filter: randomFilter(random, visible),
        select: randomSelect(random, visible),
      });
    }
    for (const filter of grammarFilters(
      table,
      visible,
      SEED + subscribers.length,
      GRAMMAR_FILTERS_PER_CALLER,
    )) {
      options.push({ filter, select: randomSelect(random, visible) });
    }
    // A hidden column is unknown to the feed as to a read.
    options.push({ filter: "secret eq 's1'", select: null });
    for (const option of options) {
      const stream = await openStream(
        `${gw.url}/table/items/changes?${query(option)}`,
        caller.headers,
      );
      const read = await readText(caller, query(option));
      if (stream.status !== 200 || read.status !== 200) {
        // Refused: exactly as the read refuses it.
        expect({ status: stream.status, body: stream.body }).toEqual({
          status: read.status,
          body: read.text,
        });
        refused.push(`${caller.name}: ${option.filter} → ${read.status}`);
        stream.close();
        continue;
      }
      if (option.filter !== null) filters++;
      subscribers.push({ caller, ...option, stream, expected: [], rows: new Map() });
    }
  }
  // The sentinel: the auditor without options sees every row; it goes first.
  const sentinel = subscribers.find(
    (s) => s.caller.name === 'auditor' && s.filter === null && s.select === null,
  ) as Subscriber;
  subscribers.splice(subscribers.indexOf(sentinel), 1);
  subscribers.unshift(sentinel);
  expect(refused.filter((r) => r.includes("secret eq 's1'"))).toHaveLength(
    CALLERS.filter((c) => c.few !== true).length,
  );

  await inParallel(subscribers, async (s) => {
    s.rows = await readRows(s);
  });

  let changes = 0;
  let events = 0;
  let transactions = 0;
  let altered = false;
  let bursts = 0;
  while (changes < ROW_CHANGES) {
    if (!altered && changes >= ROW_CHANGES / 2) {
      // Midway, a column's collation changes: a `schema` event, then decisions by the new one.
      altered = true;
      await writer.query(
        'ALTER TABLE items MODIFY name VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL',
      );
      const tx = JSON.stringify(await lastGtid());
      for (const s of subscribers) {
        s.expected.push({
          event: 'schema',
          data: `{"op":"schema","table":"items","at":"AT","tx":${tx}}`,
        });
      }
      await settled(subscribers, tx, 1, `ALTER TABLE (${tx})`);
      // What a filter matches may change with the collation: the reads start over.
      await inParallel(subscribers, async (s) => {
        s.rows = await readRows(s);
      });
    }
    // Sometimes a burst of transactions, written without waiting (the feed decides them in one
    // batch); they change disjoint rows, so one read after them all tells each one's events.
    const burst = random() < 0.3 ? 2 + Math.floor(random() * 3) : 1;
    const touchedInBurst = new Set<number>();
    const written: { gtid: string; changed: RowChange[]; sql: string }[] = [];
    for (let b = 0; b < burst; b++) {
      transactions++;
      const statements = randomTransaction(random, model, nextId, touchedInBurst);
      if (random() < 0.25) {
        // A row of another table in the same transaction: not this feed's, and between its rows.
        statements.splice(Math.floor(random() * (statements.length + 1)), 0, {
          sql: 'INSERT INTO other (v) VALUES (?)',
          params: ['x'],
          ids: [],
        });
      }
      await writer.query('BEGIN');
      // No row is changed twice: what changed is what differs at the transaction's ends.
      const touched = statements.flatMap((statement) => statement.ids);
      const before = await storedRows(touched);
      for (const statement of statements) {
        await writer.query(statement.sql, [...statement.params]);
      }
      const after = await storedRows(touched);
      const changed: RowChange[] = [];
      for (const statement of statements) {
        if (statement.rekey !== undefined) {
          if (after.has(statement.rekey[1])) changed.push({ rekey: statement.rekey });
          continue;
        }
        for (const id of statement.ids) if (before.get(id) !== after.get(id)) changed.push({ id });
      }
      await writer.query('COMMIT');
      const gtid = await lastGtid();
      if (changed.length === 0) {
        // No row of items changed: nothing for a subscriber, whose every event is checked against
        // the transactions that did change one (by their tx). The log may still hold the
        // transaction for its rows of `other` (seed 20261122: an insert there beside an update
        // of items that set a NULL to NULL).
        continue;
      }
      changes += changed.length;
      const sql = statements.map((s) => `${s.sql} ${JSON.stringify(s.params)}`).join('\n  ');
      written.push({ gtid, changed, sql: `${gtid}:\n  ${sql}` });
    }
    const last = written[written.length - 1];
    if (last === undefined) continue;
    await inParallel(subscribers, async (s) => {
      const after = await readRows(s);
      for (const { gtid, changed } of written) {
        s.expected.push(...expectedEvents(s.rows, after, changed, JSON.stringify(gtid)));
      }
      s.rows = after;
    });
    // The sentinel gets transactions in commit order: the last one's events close the burst.
    const tx = JSON.stringify(last.gtid);
    await settled(
      subscribers,
      tx,
      sentinel.expected.filter((e) => e.data.endsWith(`"tx":${tx}}`)).length,
      `transactions ${written.map((w) => w.sql).join('\n')}`,
    );
    bursts += written.length > 1 ? 1 : 0;
  }
  const commitTimes = new Map<string, Set<string>>();
  for (const s of subscribers) {
    events += s.expected.length;
    for (const e of s.stream.events) {
      const [, at, tx] = /,"at":"([^"]*)","tx":"([^"]*)"}$/.exec(e.data) ?? [];
      expect(at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      commitTimes.set(tx as string, (commitTimes.get(tx as string) ?? new Set()).add(at as string));
      expect(e.id).toMatch(/^f1\./);
    }
    s.stream.close();
  }
  // One transaction, one commit time, whoever was sent it.
  expect([...commitTimes.values()].filter((times) => times.size !== 1)).toEqual([]);
  // Ann's accent variant sees nothing of ann's rows, nor ann of hers: a row a user is sent is
  // its own by the exact email (or its id).
  let byIdOnly = 0;
  for (const name of ['ann', 'ánn']) {
    const caller = CALLERS.find((c) => c.name === name) as Caller;
    const rows = subscribers
      .filter((s) => s.caller === caller && s.select === null)
      .flatMap((s) => s.stream.events)
      .filter((e) => e.event === 'insert' || e.event === 'update')
      .map((e) => (parseExact(e.data) as { row: { owner: string; uid: unknown } }).row);
    expect(rows.length).toBeGreaterThan(0);
    const others = rows.filter(
      (row) =>
        !row.owner.endsWith(caller.email as string) &&
        (row.uid instanceof ExactNumber ? row.uid.text : row.uid) !== caller.id,
    );
    expect(others).toEqual([]);
    byIdOnly += rows.filter((row) => !row.owner.endsWith(caller.email as string)).length;
  }
  console.log(
    `changes-differential: ${subscribers.length} subscribers (${filters} with a $filter, ${refused.length} refused as reads are), ${changes} row changes in ${transactions} transactions (${bursts} bursts written without waiting), ${events} events compared (${byIdOnly} rows users saw by @user.id alone), in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  expect(filters).toBeGreaterThanOrEqual(20);
  expect(changes).toBeGreaterThanOrEqual(ROW_CHANGES);
}, 120_000);

test('a key change is a delete of the old key, then an insert at the new; resuming after the delete sends both again', async () => {
  const auditor = CALLERS.find((c) => c.role === 'auditor') as Caller;
  const url = `${gw.url}/table/items/changes?$select=id,name&$filter=${encodeURIComponent('id ge 1000')}`;
  const feed = await openStream(url, auditor.headers);
  await writer.query(
    "INSERT INTO items (id, owner, name) VALUES (1000, 'bob@example.com', 'moved')",
  );
  await writer.query('UPDATE items SET id = 1001 WHERE id = 1000');
  await waitFor(() => feed.events.length >= 3);
  feed.close();
  const plain = (events: readonly { event: string; data: string }[]) =>
    events.map((e) => [e.event, e.data.replace(/,"at":"[^"]*","tx":"[^"]*"}$/, '}')]);
  const moved = [
    ['delete', '{"op":"delete","table":"items","key":{"id":1000}}'],
    [
      'insert',
      '{"op":"insert","table":"items","key":{"id":1001},"row":{"id":1001,"name":"moved"}}',
    ],
  ];
  expect(plain(feed.events)).toEqual([
    [
      'insert',
      '{"op":"insert","table":"items","key":{"id":1000},"row":{"id":1000,"name":"moved"}}',
    ],
    ...moved,
  ]);
  const [, gone, came] = feed.events as [unknown, { id: string }, { id: string }];
  // A client cut between the two resumes from the delete's id: the change comes again whole.
  const again = await openStream(url, { ...auditor.headers, 'last-event-id': gone.id });
  expect(await waitFor(() => again.events.length >= 2)).toBe(true);
  again.close();
  expect(plain(again.events)).toEqual(moved);
  // From the insert's id, nothing of it: only what comes next.
  const after = await openStream(url, { ...auditor.headers, 'last-event-id': came.id });
  await writer.query("UPDATE items SET name = 'next' WHERE id = 1001");
  expect(await waitFor(() => after.events.length >= 1)).toBe(true);
  await new Promise((resolve) => setTimeout(resolve, 300));
  after.close();
  expect(plain(after.events)).toEqual([
    ['update', '{"op":"update","table":"items","key":{"id":1001},"row":{"id":1001,"name":"next"}}'],
  ]);
});

test('a transaction whose row images together pass max_allowed_packet arrives whole, as reads answer its rows', async () => {
  const [[setting]] = (await writer.query('SELECT @@max_allowed_packet AS packet')) as unknown as [
    { packet: number }[],
  ];
  const packet = Number(setting?.packet);
  const auditor = CALLERS.find((c) => c.role === 'auditor') as Caller;
  const size = 1024 * 1024;
  const rows = Math.ceil((packet * 1.5) / size / 2);
  const feed = await openStream(`${gw.url}/table/big_rows/changes`, auditor.headers);
  expect(feed.status).toBe(200);
  await writer.query('BEGIN');
  for (let id = 1; id <= rows; id++) {
    await writer.query('INSERT INTO big_rows VALUES (?, ?)', [id, 'a'.repeat(size)]);
  }
  await writer.query('COMMIT');
  await writer.query('BEGIN');
  for (let id = 1; id <= rows; id++) {
    await writer.query('UPDATE big_rows SET body = ? WHERE id = ?', ['b'.repeat(size), id]);
  }
  await writer.query('COMMIT');
  await waitFor(() => feed.events.length >= 2 * rows, 30_000);
  feed.close();
  console.log(`big_rows: ${rows} rows of 1 MiB, max_allowed_packet ${packet}`);
  expect(feed.events.map((e) => [e.event, /"key":(\{[^}]*\})/.exec(e.data)?.[1]])).toEqual([
    ...Array.from({ length: rows }, (_, i) => ['insert', `{"id":${i + 1}}`]),
    ...Array.from({ length: rows }, (_, i) => ['update', `{"id":${i + 1}}`]),
  ]);
  const read = await readText(
    auditor,
    `$filter=${encodeURIComponent(`id eq ${rows}`)}`,
    'big_rows',
  );
  expect(feed.events.at(-1)?.data).toContain(`"row":${splitJsonArray(read.text)[0]},"at"`);
  expect(read.text).toContain(`"body":"${'b'.repeat(size)}"`);
}, 60_000);
