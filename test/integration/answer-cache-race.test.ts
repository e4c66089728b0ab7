/**
 * The server cache under races (docs/caching.md, "The server cache"): workers at once read
 * random URLs as two roles whose row conditions differ (`left` sees the odd ids, `right` the
 * even ones) and write random rows through the gateway and with a mysql client, against a
 * private MariaDB with the binary log on.
 *
 * - During the races every answer is checked row by row against the writes' history: each row
 *   is written by one writer at a time, every write gives its row a `qty` never used before, so
 *   a row's versions are in order. A row answered must hold a version no older than the last one
 *   known visible when the read was sent — a gateway write whose answer had arrived (read your
 *   writes), a mysql client's write whose GTID the gateway's feed had read (the feed's lag: the
 *   test polls for the feed's position, it never sleeps; the feed is made to lag 100 ms so that
 *   only the gateway's own drop can make its write read back at once) — and no newer than the last write
 *   begun before the answer came. A key read's 404 must be such a version too. Every row must
 *   be one the role may see: one role's answer is never given to the other.
 * - Between rounds, once the feed has read every write, every URL of both roles must answer
 *   exactly what a second gateway without a cache answers (MySQL at that moment): status, body,
 *   ETag, X-Total-Count and Link. An answer read before a change and kept after its drop would
 *   show here.
 *
 * Each worker draws from its own generator seeded from FUZZ_SEED (printed), so a failure
 * replays the same operations; their interleaving is the machine's.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import type { PrivateServer } from '../../src/demo/private-server.js';
import { seededRandom } from '../helpers/fault-proxy.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';
import { signUpAs, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rootConnection, startBinlogServer } from '../helpers/private-servers.js';

const SEED = fuzzSeed();
const DB = `acrace_${randomBytes(4).toString('hex')}`;
/** Rows 1–12 exist at the start; 13–16 are created and deleted as the test goes. */
const IDS = Array.from({ length: 16 }, (_, i) => i + 1);
const FIRST_IDS = 12;
const WORKERS = 4;
const ROUNDS = 4;
const OPERATIONS = 100;

const POLICY = {
  roles: {
    staff: { tables: { items: { read: true, create: true, update: true, delete: true } } },
    left: { tables: { items: { read: { where: 'grp eq 1' } } } },
    right: { tables: { items: { read: { where: 'grp eq 2' } } } },
  },
};

/** The group a row of this id is in, for good: left sees group 1, right group 2. */
const groupOf = (id: number) => (id % 2 === 1 ? 1 : 2);

const READS = [
  ...IDS.map((id) => `/table/items/read(id,${id})`),
  ...[3, 8, 13, 14].map((id) => `/table/items/read?$filter=id eq ${id}`),
  '/table/items/read?$orderby=id&$top=3',
  '/table/items/read?$orderby=id&$top=3&$skip=3',
  '/table/items/read?$orderby=id&$top=50&$count=true',
  '/table/items/read?$select=id,qty&$filter=id ge 10&$orderby=id desc&$top=50',
  '/table/items/read?$apply=groupby((grp),aggregate(qty with sum as total))&$top=10',
];
/** Read as CSV too (another entry of the same URL). */
const CSV_READ = '/table/items/read?$orderby=id&$top=50&$count=true';

let server: PrivateServer;
let admin: mysql.Connection;
let gw: TestGateway;
/** The same API without a cache: what MySQL answers now. */
let plain: TestGateway;
let policyDir: string;
let staff: string;
const roles: { name: 'left' | 'right'; group: number; token: string }[] = [];

/** One row's versions in write order: a qty, or null for no row. */
const versions = new Map<number, (number | null)[]>();
/** Per row, the index of the last version known visible to a read sent now. */
const visible = new Map<number, number>();
/** Rows with a write in flight: one writer at a time per row keeps the versions in order. */
const writing = new Set<number>();
let nextQty = 100_000;

/** GTIDs the gateway's feed has read (told after the cache dropped their tables). */
const seen = new Set<string>();
/** A mysql client's write waiting for the feed: GTID → the row and the version it made. */
const awaited = new Map<string, { id: number; index: number }>();
/** The GTID each writer connection wrote last. */
const lastGtids = new Set<string>();

function known(id: number, index: number): void {
  if (index > (visible.get(id) ?? 0)) visible.set(id, index);
}

interface Got {
  status: number;
  body: string;
  headers: Record<string, string>;
}

async function get(route: string, token: string, accept?: string, from: TestGateway = gw) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (accept !== undefined) headers.accept = accept;
  const response = await fetch(`${from.url}${route}`, { headers });
  const kept: Record<string, string> = {};
  for (const [name, value] of response.headers) if (name !== 'date') kept[name] = value;
  return { status: response.status, body: await response.text(), headers: kept } as Got;
}

async function send(method: string, route: string, body?: unknown): Promise<number> {
  const response = await fetch(`${gw.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${staff}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await response.text();
  return response.status;
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(String(gw.gateway.metricsUrl))).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

/** What went wrong, with what replays it. */
function failure(what: string): Error {
  return new Error(`FUZZ_SEED=${SEED}: ${what}`);
}

/**
 * One answer of a race: its rows are the role's and each holds a version between the last one
 * known visible when it was sent (`floors`) and the last one begun before it came.
 */
function checkRace(
  route: string,
  role: (typeof roles)[number],
  floors: ReadonlyMap<number, number>,
  got: Got,
): void {
  const within = (id: number, value: number | null) => {
    const list = versions.get(id) ?? [];
    const from = floors.get(id) ?? 0;
    for (let i = from; i < list.length; i++) if (list[i] === value) return true;
    return false;
  };
  const where = `${role.name} ${route} → ${got.status} ${got.body}`;
  const key = /^\/table\/items\/read\(id,(\d+)\)$/.exec(route);
  if (key !== null) {
    const id = Number(key[1]);
    if (got.status === 404) {
      if (groupOf(id) !== role.group) return;
      if (!within(id, null)) throw failure(`a row that exists answered 404: ${where}`);
      return;
    }
    if (got.status !== 200) throw failure(`unexpected status: ${where}`);
    const row = JSON.parse(got.body) as { id: number; grp: number; qty: number };
    if (row.grp !== role.group || groupOf(row.id) !== role.group)
      throw failure(`another role's row: ${where}`);
    if (!within(id, row.qty)) throw failure(`a stale or unknown version: ${where}`);
    return;
  }
  if (got.status !== 200) throw failure(`unexpected status: ${where}`);
  if (route.includes('$apply')) {
    const groups = JSON.parse(got.body) as { grp: number }[];
    if (groups.some((g) => g.grp !== role.group)) throw failure(`another role's total: ${where}`);
    return;
  }
  for (const row of JSON.parse(got.body) as { id: number; grp?: number; qty: number }[]) {
    if (groupOf(row.id) !== role.group || (row.grp !== undefined && row.grp !== role.group))
      throw failure(`another role's row: ${where}`);
    if (!within(row.id, row.qty)) throw failure(`a stale or unknown version: ${where}`);
  }
}

/** A write of one row, by the gateway or the mysql client, that gives it a new version. */
async function write(id: number, byGateway: boolean, connection: mysql.Connection, roll: number) {
  const list = versions.get(id) as (number | null)[];
  const exists = list[list.length - 1] !== null;
  const qty = nextQty++;
  // Deleted only among the rows made later, so the pages keep most of theirs.
  const next = exists && id > FIRST_IDS && roll < 0.3 ? null : qty;
  // Begun: from now on a read may see it.
  list.push(next);
  const index = list.length - 1;
  if (byGateway) {
    let status: number;
    if (!exists) {
      status = await send('POST', '/table/items/create', {
        id,
        grp: groupOf(id),
        qty,
        note: `g${qty}`,
      });
    } else if (next === null) status = await send('DELETE', `/table/items/delete(id,${id})`);
    else status = await send('PUT', `/table/items/update(id,${id})`, { qty, note: `g${qty}` });
    if (status !== 200 && status !== 201) throw failure(`gateway write of ${id}: ${status}`);
    // Its answer came: every read sent from now on must see it (read your writes).
    known(id, index);
    return;
  }
  if (!exists) {
    await connection.query('INSERT INTO items VALUES (?, ?, ?, ?)', [
      id,
      groupOf(id),
      qty,
      `m${qty}`,
    ]);
  } else if (next === null) await connection.query('DELETE FROM items WHERE id = ?', [id]);
  else
    await connection.query('UPDATE items SET qty = ?, note = ? WHERE id = ?', [qty, `m${qty}`, id]);
  const gtid = await lastGtid(connection);
  lastGtids.add(gtid);
  // Visible once the feed has read it (its lag): maybe already.
  if (seen.has(gtid)) known(id, index);
  else awaited.set(gtid, { id, index });
}

async function lastGtid(connection: mysql.Connection): Promise<string> {
  const [[row]] = (await connection.query('SELECT @@last_gtid AS g')) as unknown as [
    [{ g: string }],
  ];
  return row.g;
}

/** Until the feed has read every write of the mysql client (bounded). */
async function feedCaughtUp(): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ([...lastGtids].some((gtid) => !seen.has(gtid))) {
    if (Date.now() > deadline) throw failure('the feed did not read every write in 20 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Holds back every transaction the gateway's feed reads by `ms` (its reader hands each to the
 * feed's `read`, which tells the cache, then the test's watcher): a feed that lags, so that only
 * the gateway's own drop can make its write read back at once. 0 puts it back.
 */
function feedLag(ms: number): void {
  const feed = gw.gateway.feed as unknown as { read: (t: unknown) => void };
  const own = Object.getPrototypeOf(feed).read as (t: unknown) => void;
  if (ms === 0) {
    delete (feed as { read?: unknown }).read;
    return;
  }
  feed.read = (t) => setTimeout(() => own.call(feed, t), ms);
}

async function worker(index: number, round: number, connection: mysql.Connection) {
  const random = seededRandom(SEED + 1000 * round + index);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  for (let step = 0; step < OPERATIONS; step++) {
    const roll = random();
    // Few writes: each drops every answer of the table, and the reads between should hit.
    if (roll < 0.08) {
      const id = pick(IDS);
      const roll2 = random();
      // One writer at a time per row: a busy row is read instead.
      if (!writing.has(id)) {
        writing.add(id);
        try {
          await write(id, roll < 0.04, connection, roll2);
        } finally {
          writing.delete(id);
        }
        continue;
      }
    }
    const route = pick(READS);
    const role = pick(roles);
    const floors = new Map(visible);
    checkRace(route, role, floors, await get(route, role.token));
  }
}

/** Every URL of both roles answers as MySQL does now, byte for byte, headers too. */
async function sweep(round: number): Promise<number> {
  let compared = 0;
  for (const role of roles) {
    for (const [route, accept] of [
      ...READS.map((r) => [r, undefined] as const),
      [CSV_READ, 'text/csv'] as const,
    ]) {
      // Twice: the first may be an answer kept during the round, the second is the hit of
      // what the first kept.
      const served = [await get(route, role.token, accept), await get(route, role.token, accept)];
      const fresh = await get(route, role.token, accept, plain);
      const pick = (g: Got) =>
        JSON.stringify({
          status: g.status,
          body: g.body,
          etag: g.headers.etag,
          total: g.headers['x-total-count'],
          link: g.headers.link,
        });
      for (const [n, answer] of served.entries()) {
        if (pick(answer) === pick(fresh)) continue;
        throw failure(
          `round ${round}, ${role.name} ${route}${accept ? ` (${accept})` : ''}, read ${n + 1}: served ${pick(answer)}, MySQL ${pick(fresh)}`,
        );
      }
      compared++;
    }
  }
  return compared;
}

beforeAll(async () => {
  server = await startBinlogServer();
  admin = await rootConnection(server);
  await admin.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.query(`USE ${DB}`);
  await admin.query(
    'CREATE TABLE items (id INT PRIMARY KEY, grp INT NOT NULL, qty INT NOT NULL, note VARCHAR(20) NOT NULL)',
  );
  for (const id of IDS) {
    const present = id <= FIRST_IDS;
    versions.set(id, [present ? 1000 + id : null]);
    visible.set(id, 0);
    if (present) {
      await admin.query('INSERT INTO items VALUES (?, ?, ?, ?)', [id, groupOf(id), 1000 + id, 'x']);
    }
  }
  policyDir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-acrace-'));
  const policyFile = path.join(policyDir, 'policy.json');
  await writeFile(policyFile, JSON.stringify(POLICY));
  gw = await startTestGateway(DB, {
    db: { ...server, database: DB, poolSize: 4 },
    mode: 'auth',
    jwtSecret: 'answer-cache-race-secret-0123456789abcdefghij',
    policyFile,
    metricsPort: 0,
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
  });
  plain = await startTestGateway(DB, { ...gw.config, metricsPort: null, cacheMiB: 0 });
  gw.gateway.feed.watch({
    transaction: (t) => {
      seen.add(t.gtid);
      const waiting = awaited.get(t.gtid);
      if (waiting === undefined) return;
      awaited.delete(t.gtid);
      known(waiting.id, waiting.index);
    },
    connection: () => {},
  });
  staff = (await signUpAs(gw.url, admin, { email: 's@x.io', password: 'pw-staff-123' }, 'staff'))
    .token;
  for (const [name, group] of [
    ['left', 1],
    ['right', 2],
  ] as const) {
    const { token } = await signUpAs(
      gw.url,
      admin,
      { email: `${name}@x.io`, password: `pw-${name}-1234` },
      name,
    );
    roles.push({ name, group, token });
  }
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await plain?.close();
  await admin?.end();
  await server?.destroy();
  if (policyDir) await rm(policyDir, { recursive: true, force: true });
});

test('races: every answer is the role’s and current; between rounds, MySQL’s byte for byte', async () => {
  console.log(`answer-cache-race: FUZZ_SEED=${SEED}`);
  const connections = await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      const connection = await rootConnection(server);
      await connection.query(`USE ${DB}`);
      return connection;
    }),
  );
  // The gateway's own writes must be read back by its own drops, not by the feed's.
  feedLag(100);
  try {
    let compared = 0;
    /** Hits while the workers ran: the races met the cache. */
    let racedHits = 0;
    compared += await sweep(0);
    for (let round = 1; round <= ROUNDS; round++) {
      const hits = await metric('tablegate_cache_hits_total');
      await Promise.all(connections.map((c, i) => worker(i, round, c)));
      racedHits += (await metric('tablegate_cache_hits_total')) - hits;
      await feedCaughtUp();
      compared += await sweep(round);
    }
    console.log(
      `answer-cache-race: ${racedHits} hits during the races, ${nextQty - 100_000} writes`,
    );
    expect(compared).toBe((ROUNDS + 1) * roles.length * (READS.length + 1));
    // Answers came from the cache during the races (else they tested nothing of it).
    expect(racedHits).toBeGreaterThan(60);
    expect(nextQty).toBeGreaterThan(100_000 + 30);
  } finally {
    feedLag(0);
    await Promise.all(connections.map((c) => c.end()));
  }
}, 180_000);
