/**
 * Paging through a table with `$skiptoken` over HTTP against a real MySQL (docs/paging.md):
 * following the Link of each page yields every row exactly once, in the order the same ORDER BY
 * gives in one statement, under every sort shape (ASC, DESC, nullable keys, duplicates, composite
 * and BIGINT UNSIGNED keys, every type's exact values), also when rows are inserted and deleted
 * between pages; under a policy, with `$expand`, past PAGE_HOLD_BYTES, on a view; tokens survive a
 * restart and work on another gateway with the same secret; tampered or moved tokens are 400
 * BAD_SKIPTOKEN.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { USERS_TABLE } from '../../src/db/schema.js';
import { PAGE_HOLD_BYTES } from '../../src/limits.js';
import { createTestDatabase, integers, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURE = `
CREATE TABLE p (
  id INT PRIMARY KEY,
  a INT NULL,
  b VARCHAR(10) NOT NULL,
  d DECIMAL(10,2) NULL,
  dt DATETIME(6) NULL,
  dup INT NOT NULL,
  KEY (a), KEY (dt)
);
INSERT INTO p SELECT seq,
  IF(seq % 5 = 0, NULL, seq % 7),
  ELT(1 + seq % 4, 'x', 'X', 'y', 'Y'),
  IF(seq % 6 = 0, NULL, (seq % 9) / 4),
  IF(seq % 4 = 0, NULL, TIMESTAMP('2024-01-01') + INTERVAL seq % 5 SECOND + INTERVAL seq % 3 MICROSECOND),
  seq % 3
FROM ${integers(47)};

CREATE TABLE pairs (k1 INT, k2 VARCHAR(5), v INT NULL, PRIMARY KEY (k1, k2));
INSERT INTO pairs SELECT seq % 4, CONCAT('k', seq), IF(seq % 3 = 0, NULL, seq % 5) FROM ${integers(23)};

CREATE TABLE kinds (
  id BIGINT UNSIGNED PRIMARY KEY,
  big BIGINT NULL, dec65 DECIMAL(65,30) NULL, f FLOAT NULL, dbl DOUBLE NULL,
  day DATE NULL, ts TIMESTAMP(6) NULL, tm TIME(3) NULL, yr YEAR NULL,
  en ENUM('zeta','alpha','mid') NULL, st SET('x','a') NULL,
  bin VARBINARY(4) NULL, bits BIT(64) NULL, js JSON NULL
);
INSERT INTO kinds VALUES
  (18446744073709551615, 9007199254740993, 0.000000000000000000000000000002, 1.1, 0.1,
   '2024-02-29', '2038-01-19 03:14:07.000001', '-838:59:59.000', 2155, 'zeta', 'a', x'00ff', x'ffffffffffffffff', '{"a": 1}'),
  (18446744073709551614, 9007199254740992, 0.000000000000000000000000000001, 1.1, 0.3,
   '2024-02-29', '2038-01-19 03:14:07.000000', '838:59:59.999', 1901, 'alpha', 'x', x'00fe', x'0000000000000001', '[1]'),
  (9223372036854775808, -9223372036854775808, -99999999999999999999999999999999999.999999999999999999999999999999, -3.5, 1e300,
   '1000-01-01', '1970-01-01 00:00:01.000000', '00:00:00.001', 1901, 'mid', 'x,a', x'', x'0000000000000000', '"s"'),
  (9007199254740993, 9007199254740993, 0.000000000000000000000000000002, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (9007199254740992, NULL, NULL, 1.1, 0.1, '2024-02-29', '2038-01-19 03:14:07.000001', '-838:59:59.000', 2155, 'zeta', '', x'00ff', x'ffffffffffffffff', NULL),
  (1, 0, 0, 0, -0.0, '9999-12-31', '2000-01-01 00:00:00.000000', '00:00:00', 2000, 'alpha', 'a', x'ff', x'0000000000000002', 'null');

CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(20) NULL);
INSERT INTO customers VALUES (1, 'Ann'), (2, NULL), (3, 'Bob'), (4, 'ann');
CREATE TABLE orders (
  id INT PRIMARY KEY, customer_id INT NULL, total DECIMAL(8,2) NOT NULL,
  FOREIGN KEY (customer_id) REFERENCES customers (id)
);
INSERT INTO orders SELECT seq, IF(seq % 6 = 0, NULL, 1 + seq % 4), seq * 1.25 FROM ${integers(19)};
CREATE TABLE items (
  id INT PRIMARY KEY, order_id INT NOT NULL, qty INT NOT NULL,
  FOREIGN KEY (order_id) REFERENCES orders (id)
);
INSERT INTO items SELECT seq, 1 + seq % 19, seq % 4 FROM ${integers(40)};

CREATE TABLE wide (id INT PRIMARY KEY, body MEDIUMTEXT NOT NULL);
INSERT INTO wide SELECT seq, REPEAT(CHAR(97 + seq % 26), 100000) FROM ${integers(37)};

CREATE TABLE p_copy LIKE p;
INSERT INTO p_copy SELECT * FROM p;

CREATE VIEW even_p AS SELECT id, a, b FROM p WHERE id % 2 = 0;
`;

type Row = Record<string, unknown>;

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  gw = await startTestGateway(db.name);
});
afterAll(async () => {
  await gw.close();
  await db.drop();
});

interface Page {
  readonly status: number;
  readonly body: unknown;
  readonly link: string | null;
  readonly next: string | null;
  readonly headers: Headers;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Page> {
  const response = await fetch(url, { headers });
  const link = response.headers.get('link');
  const target = link === null ? null : (/^<([^>]*)>; rel="next"$/.exec(link)?.[1] ?? null);
  if (link !== null) expect(target).not.toBeNull();
  return {
    status: response.status,
    body: await response.json(),
    link,
    next: target === null ? null : new URL(target, response.url).href,
    headers: response.headers,
  };
}

/** Follows the Links from `first`; `between(n)` runs after page n. */
async function walk(
  first: string,
  options: {
    base?: string;
    headers?: Record<string, string>;
    between?: (page: number) => Promise<void>;
  } = {},
): Promise<{ rows: Row[]; pages: Row[][] }> {
  const pages: Row[][] = [];
  let url: string | null = `${options.base ?? gw.url}${first}`;
  while (url !== null) {
    const page = await get(url, options.headers);
    expect(page.status).toBe(200);
    pages.push(page.body as Row[]);
    if (pages.length > 500) throw new Error('more than 500 pages');
    url = page.next;
    if (url !== null) await options.between?.(pages.length);
  }
  return { rows: pages.flat(), pages };
}

async function sql(text: string, values: unknown[] = []): Promise<Row[]> {
  const [rows] = await db.admin.query<mysql.RowDataPacket[]>(text, values);
  return rows as Row[];
}

const ids = (rows: readonly Row[]) => rows.map((row) => String(row.id));

describe('walking a table yields each row once, in the order of one ORDER BY', () => {
  const shapes: [string, string][] = [
    ['', 'id'],
    ['id desc', 'id DESC'],
    ['a', 'a, id'],
    ['a desc', 'a DESC, id DESC'],
    ['a,b desc', 'a, b DESC, id DESC'],
    ['b', 'b, id'],
    ['b desc,a', 'b DESC, a, id'],
    ['dup', 'dup, id'],
    ['dup desc,d', 'dup DESC, d, id'],
    ['d desc', 'd DESC, id DESC'],
    ['dt', 'dt, id'],
    ['dt desc,a', 'dt DESC, a, id'],
  ];
  test.each(shapes)('$orderby=%s', async (orderby, orderBy) => {
    const expected = ids(await sql(`SELECT id FROM p ORDER BY ${orderBy}`));
    for (const top of [1, 4, 7]) {
      const query = `${orderby === '' ? '' : `$orderby=${encodeURIComponent(orderby)}&`}$top=${top}`;
      const { rows, pages } = await walk(`/table/p/read?${query}`);
      expect(ids(rows)).toEqual(expected);
      expect(pages.every((page) => page.length <= top)).toBe(true);
      // The last page is short, or empty after a full one.
      expect(pages.length).toBe(Math.floor(expected.length / top) + 1);
    }
  });

  test('with $filter, and $select leaving the sort keys out of the rows', async () => {
    const expected = await sql('SELECT b, a FROM p WHERE dup <> 1 ORDER BY a DESC, id DESC');
    const { rows } = await walk(
      `/table/p/read?$filter=${encodeURIComponent('dup ne 1')}&$select=b,a&$orderby=${encodeURIComponent('a desc')}&$top=3`,
    );
    expect(rows).toEqual(expected);
  });

  test('a composite primary key, with and without $orderby', async () => {
    for (const [orderby, orderBy] of [
      ['', 'k1, k2'],
      ['v desc', 'v DESC, k1 DESC, k2 DESC'],
      ['k2 desc', 'k2 DESC, k1 DESC'],
    ] as const) {
      const expected = await sql(`SELECT k1, k2, v FROM pairs ORDER BY ${orderBy}`);
      const query = orderby === '' ? '' : `$orderby=${encodeURIComponent(orderby)}&`;
      expect((await walk(`/table/pairs/read?${query}$top=4`)).rows).toEqual(expected);
    }
  });

  test.each(['id', 'big', 'dec65', 'f', 'dbl', 'day', 'ts', 'tm', 'yr', 'en', 'st', 'bin', 'bits'])(
    'every value of a %s key continues exactly (ASC and DESC)',
    async (name) => {
      for (const direction of ['ASC', 'DESC']) {
        const tie = name === 'id' ? '' : `, id ${direction}`;
        const expected = ids(await sql(`SELECT id FROM kinds ORDER BY ${name} ${direction}${tie}`));
        const orderby = encodeURIComponent(`${name} ${direction.toLowerCase()}`);
        const { rows } = await walk(`/table/kinds/read?$select=id&$orderby=${orderby}&$top=1`);
        expect(ids(rows)).toEqual(expected);
      }
    },
  );

  test('a JSON sort key pages by count, also to the end', async () => {
    const { rows } = await walk('/table/kinds/read?$select=id&$orderby=js&$top=2');
    expect(new Set(ids(rows)).size).toBe(6);
    expect(rows).toHaveLength(6);
  });

  test('a view has no primary key: its pages follow by count', async () => {
    const expected = await sql('SELECT id, a, b FROM even_p ORDER BY id');
    expect((await walk('/table/even_p/read?$orderby=id&$top=5')).rows).toEqual(expected);
  });
});

describe('rows inserted and deleted between pages', () => {
  /** A deterministic generator, so a failure can be replayed. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state / 2147483648;
    };
  }

  test.each([
    ['id', 'id'],
    ['a', 'a, id'],
    ['a desc,b', 'a DESC, b, id'],
    ['dt desc', 'dt DESC, id DESC'],
  ])('$orderby=%s: rows there throughout come once each, in order', async (orderby, orderBy) => {
    await db.admin.query(
      'DROP TABLE IF EXISTS q; CREATE TABLE q LIKE p; INSERT INTO q SELECT * FROM p',
    );
    const before = new Set(ids(await sql('SELECT id FROM q')));
    const deleted = new Set<string>();
    const next = random(orderby.length);
    let newId = 1000;
    const { rows } = await walk(`/table/q/read?$orderby=${encodeURIComponent(orderby)}&$top=5`, {
      between: async () => {
        for (let i = 0; i < 2; i++) {
          const [victim] = await sql('SELECT id FROM q ORDER BY RAND(?) LIMIT 1', [
            Math.floor(next() * 1e6),
          ]);
          if (victim !== undefined) {
            deleted.add(String(victim.id));
            await sql('DELETE FROM q WHERE id = ?', [victim.id]);
          }
          const a = next() < 0.2 ? null : Math.floor(next() * 8);
          const second = Math.floor(next() * 6);
          await sql(
            "INSERT INTO q VALUES (?, ?, ?, NULL, IF(? IS NULL, NULL, TIMESTAMP('2024-01-01') + INTERVAL ? SECOND), 0)",
            [newId++, a, next() < 0.5 ? 'x' : 'Y', a, second],
          );
        }
      },
    });
    const seen = ids(rows);
    expect(new Set(seen).size).toBe(seen.length);
    const throughout = [...before].filter((id) => !deleted.has(id));
    expect(throughout.length).toBeGreaterThan(10);
    for (const id of throughout) expect(seen).toContain(id);
    // In order: the rows still there, as one ORDER BY sorts them now.
    const now = ids(await sql(`SELECT id FROM q ORDER BY ${orderBy}`));
    const returned = new Set(seen);
    expect(seen.filter((id) => now.includes(id))).toEqual(now.filter((id) => returned.has(id)));
  });
});

describe('the Link header', () => {
  test('relative: the same request with $skiptoken in place of $skip; exposed to browsers', async () => {
    const page = await get(`${gw.url}/table/p/read?$select=id&$orderby=a&$top=2&$skip=4`, {
      Origin: 'https://app.example',
    });
    expect(page.body).toEqual(
      (await sql('SELECT id FROM p ORDER BY a, id LIMIT 2 OFFSET 4')).map((r) => ({ id: r.id })),
    );
    expect(page.link).toMatch(
      /^<\/table\/p\/read\?\$select=id&\$orderby=a&\$top=2&\$skiptoken=[A-Za-z0-9_-]+>; rel="next"$/,
    );
    expect(page.headers.get('access-control-expose-headers')).toContain('Link');
    // The next page continues after row 6 of the order, without OFFSET.
    const next = await get(page.next as string);
    expect(next.body).toEqual(
      (await sql('SELECT id FROM p ORDER BY a, id LIMIT 2 OFFSET 6')).map((r) => ({ id: r.id })),
    );
  });

  test('every token of a read is one length, whatever the keys (1 to 2^64 - 1, strings)', async () => {
    for (const first of [
      '/table/kinds/read?$select=big&$top=1',
      '/table/pairs/read?$select=v&$orderby=k2&$top=1',
      '/table/p/read?$select=a&$orderby=dt desc&$top=3',
    ]) {
      const lengths = new Set<number>();
      let url: string | null = `${gw.url}${first}`;
      while (url !== null) {
        const page = await get(url);
        expect(page.status).toBe(200);
        url = page.next;
        if (url !== null) lengths.add(new URL(url).searchParams.get('$skiptoken')?.length ?? 0);
      }
      expect([...lengths]).toEqual([210]);
    }
  });

  test('none when the page is not full, $top is 0, or there is no $top', async () => {
    expect((await get(`${gw.url}/table/p/read?$top=100`)).link).toBeNull();
    expect((await get(`${gw.url}/table/p/read?$top=0`)).link).toBeNull();
    expect((await get(`${gw.url}/table/p/read?$filter=id%20le%202`)).link).toBeNull();
  });

  test('$count counts every row the filter matches on every page; $top may change', async () => {
    const [{ total }] = (await sql('SELECT COUNT(*) AS total FROM p WHERE dup = 2')) as [Row];
    const first = await get(`${gw.url}/table/p/read?$filter=dup%20eq%202&$count=true&$top=4`);
    expect(first.headers.get('x-total-count')).toBe(String(total));
    const next = await get((first.next as string).replace('$top=4', '$top=10'));
    expect(next.status).toBe(200);
    expect(next.headers.get('x-total-count')).toBe(String(total));
    expect(ids(next.body as Row[])).toEqual(
      ids(await sql('SELECT id FROM p WHERE dup = 2 ORDER BY id LIMIT 10 OFFSET 4')),
    );
  });

  test('with --base-url the link is absolute', async () => {
    const other = await startTestGateway(db.name, { baseUrl: 'https://api.example.com/gw' });
    try {
      const page = await get(`${other.url}/table/p/read?$top=1`);
      expect(page.link).toMatch(
        /^<https:\/\/api\.example\.com\/gw\/table\/p\/read\?\$top=1&\$skiptoken=/,
      );
    } finally {
      await other.close();
    }
  });

  test(`a page over ${PAGE_HOLD_BYTES} bytes starts early; the walk still yields each row once`, async () => {
    const expected = ids(await sql('SELECT id FROM wide ORDER BY id DESC'));
    const { rows, pages } = await walk('/table/wide/read?$orderby=id%20desc&$top=15');
    expect(ids(rows)).toEqual(expected);
    // 15 rows of 100 kB do not fit: the first page ends early, and the next starts after it.
    expect(pages[0]).toHaveLength(15);
    expect(JSON.stringify(pages[0]).length).toBeGreaterThan(PAGE_HOLD_BYTES);
  });
});

describe('other answers', () => {
  test('CSV pages carry the same Link; read(<key>,<value>) takes no $skiptoken', async () => {
    const csv = { Accept: 'text/csv' };
    const first = await fetch(`${gw.url}/table/p/read?$select=id&$orderby=b&$top=30`, {
      headers: csv,
    });
    const link = first.headers.get('link') as string;
    expect(first.headers.get('content-type')).toMatch(/^text\/csv/);
    const next = new URL((/^<([^>]*)>/.exec(link) as RegExpExecArray)[1] as string, first.url);
    const second = await fetch(next, { headers: csv });
    expect(second.headers.get('link')).toBeNull();
    const lines = `${await first.text()}${(await second.text()).replace(/^id\r\n/, '')}`
      .trim()
      .split('\r\n');
    expect(lines).toEqual(['id', ...ids(await sql('SELECT id FROM p ORDER BY b, id'))]);
    const byKey = await get(`${gw.url}/table/p/read(id,1)?$skiptoken=x`);
    expect(byKey).toMatchObject({ status: 400, body: { code: 'INVALID_QUERY' } });
  });
});

describe('$expand', () => {
  test('to-one and to-many relations, ordered through a nullable relation', async () => {
    const query = `$expand=customer,items&$orderby=${encodeURIComponent('customer/name desc,total')}`;
    const whole = await get(`${gw.url}/table/orders/read?${query}`);
    expect(whole.status).toBe(200);
    const { rows } = await walk(`/table/orders/read?${query}&$top=4`);
    expect(rows).toEqual(whole.body);
    expect(rows).toHaveLength(19);
  });
});

describe('tokens that are not this read’s', () => {
  let token: string;
  const base = '/table/p/read?$select=id,a&$filter=dup%20ne%200&$orderby=a&$top=3';
  const BAD = {
    success: false,
    code: 'BAD_SKIPTOKEN',
    message:
      "The $skiptoken is not one this read's page before gave: send the Link of the page before unchanged, with the same table, $filter, $orderby, $select and $expand",
  };
  beforeAll(async () => {
    const page = await get(`${gw.url}${base}`);
    token = new URL(page.next as string).searchParams.get('$skiptoken') as string;
  });

  test('the token itself continues', async () => {
    expect((await get(`${gw.url}${base}&$skiptoken=${token}`)).status).toBe(200);
  });

  test.each<[string, () => string]>([
    [
      'edited',
      () =>
        `${base}&$skiptoken=${token.slice(0, 5)}${token[5] === 'A' ? 'B' : 'A'}${token.slice(6)}`,
    ],
    ['truncated', () => `${base}&$skiptoken=${token.slice(0, -3)}`],
    ['not base64', () => `${base}&$skiptoken=%25%25%25`],
    ['SQL', () => `${base}&$skiptoken=${encodeURIComponent("'; DROP TABLE p; --")}`],
    ['empty', () => `${base}&$skiptoken=`],
    ['another table', () => `${base.replace('/p/', '/p_copy/')}&$skiptoken=${token}`],
    [
      'another $filter',
      () => `${base.replace('dup%20ne%200', 'dup%20ne%201')}&$skiptoken=${token}`,
    ],
    ['no $filter', () => `${base.replace('&$filter=dup%20ne%200', '')}&$skiptoken=${token}`],
    [
      'another $orderby',
      () => `${base.replace('$orderby=a', '$orderby=a%20desc')}&$skiptoken=${token}`,
    ],
    [
      'another $select',
      () => `${base.replace('$select=id,a', '$select=a,id')}&$skiptoken=${token}`,
    ],
  ])('%s: 400 BAD_SKIPTOKEN', async (_name, url) => {
    const page = await get(`${gw.url}${url()}`);
    expect({ status: page.status, body: page.body }).toEqual({ status: 400, body: BAD });
    expect(ids(await sql('SELECT id FROM p'))).toHaveLength(47);
  });

  test('an $expand other than the first page’s', async () => {
    const first = await get(`${gw.url}/table/orders/read?$expand=customer&$top=2`);
    const moved = (first.next as string).replace('$expand=customer', '$expand=items');
    expect((await get(moved)).body).toEqual(BAD);
  });

  test('with $skip: 400, and a repeated $skiptoken: 400', async () => {
    expect(await get(`${gw.url}${base}&$skip=3&$skiptoken=${token}`)).toMatchObject({
      status: 400,
      body: { code: 'INVALID_QUERY' },
    });
    expect(await get(`${gw.url}${base}&$skiptoken=${token}&$skiptoken=${token}`)).toMatchObject({
      status: 400,
      body: { code: 'INVALID_QUERY' },
    });
  });
});

describe('secrets: restarts and several gateways', () => {
  const query = '/table/p/read?$orderby=b&$top=5';

  test('another gateway with the same --skiptoken-secret continues; another secret is 400', async () => {
    const secret = randomBytes(32).toString('base64url');
    const one = await startTestGateway(db.name, { skiptokenSecret: secret });
    const two = await startTestGateway(db.name, { skiptokenSecret: secret });
    try {
      const first = await get(`${one.url}${query}`);
      const path = (first.next as string).slice(one.url.length);
      const there = await get(`${two.url}${path}`);
      expect(there.status).toBe(200);
      expect(there.body).toEqual((await get(first.next as string)).body);
      expect((await get(`${gw.url}${path}`)).body).toMatchObject({ code: 'BAD_SKIPTOKEN' });
    } finally {
      await one.close();
      await two.close();
    }
  });

  test('a token outlives a restart (the secret kept in the state directory)', async () => {
    const stateDir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-state-'));
    try {
      const before = await startTestGateway(db.name, { stateDir });
      const first = await get(`${before.url}${query}`);
      const path = (first.next as string).slice(before.url.length);
      const expected = (await get(first.next as string)).body;
      await before.close();
      const after = await startTestGateway(db.name, { stateDir });
      try {
        expect((await get(`${after.url}${path}`)).body).toEqual(expected);
      } finally {
        await after.close();
      }
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});

test('open mode with a state directory it cannot write: links work until the gateway stops', async () => {
  const stuck = await startTestGateway(db.name, { stateDir: '/dev/null/tablegate-state' });
  try {
    const { rows } = await walk('/table/p/read?$orderby=b&$top=20', { base: stuck.url });
    expect(ids(rows)).toEqual(ids(await sql('SELECT id FROM p ORDER BY b, id')));
  } finally {
    await stuck.close();
  }
});

describe('policies: a token carries no right', () => {
  const PASSWORD = 'paging-password-1';
  let policyDir: string;
  let auth: TestGateway;
  const bearer: Record<string, Record<string, string>> = {};

  async function signUp(name: string, role: string): Promise<void> {
    const email = `${name}@paging.example`;
    const json = { 'Content-Type': 'application/json' };
    const body = JSON.stringify({ email, password: PASSWORD });
    expect(
      (await fetch(`${auth.url}/auth/register`, { method: 'POST', headers: json, body })).status,
    ).toBe(200);
    await db.admin.query(`UPDATE ${USERS_TABLE} SET role = ? WHERE email = ?`, [role, email]);
    const login = await fetch(`${auth.url}/auth/login`, { method: 'POST', headers: json, body });
    bearer[name] = { Authorization: `Bearer ${((await login.json()) as { token: string }).token}` };
  }

  beforeAll(async () => {
    policyDir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-paging-policy-'));
    const file = path.join(policyDir, 'policy.json');
    await writeFile(
      file,
      JSON.stringify({
        roles: {
          admin: { tables: { '*': { read: true } } },
          // The primary key hidden: the tie-breaker still orders, its value travels sealed.
          user: { tables: { p: { read: { where: 'dup eq 1', columns: ['a', 'b'] } } } },
        },
      }),
    );
    auth = await startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: randomBytes(32).toString('base64url'),
      policyFile: file,
    });
    await signUp('root', 'admin');
    await signUp('ann', 'user');
  });
  afterAll(async () => {
    await auth.close();
    await rm(policyDir, { recursive: true, force: true });
  });

  test('a walk under the role yields its rows, its columns, in order', async () => {
    const expected = await sql('SELECT a, b FROM p WHERE dup = 1 ORDER BY a, id');
    const { rows } = await walk('/table/p/read?$orderby=a&$top=4', {
      base: auth.url,
      headers: bearer.ann,
    });
    expect(rows).toEqual(expected);
  });

  test('the hidden key’s values do not show in the tokens’ lengths', async () => {
    const lengths = new Set<number>();
    let url: string | null = `${auth.url}/table/p/read?$orderby=b&$top=1`;
    while (url !== null) {
      const page = await get(url, bearer.ann);
      expect(page.status).toBe(200);
      url = page.next;
      if (url !== null) lengths.add(new URL(url).searchParams.get('$skiptoken')?.length ?? 0);
    }
    expect([...lengths]).toEqual([210]);
  });

  test('another role’s token is only a place to continue from: its rows stay hidden', async () => {
    const query = '/table/p/read?$select=a,b&$orderby=a&$top=4';
    const adminPage = await get(`${auth.url}${query}`, bearer.root);
    expect(adminPage.status).toBe(200);
    const mine = await get(adminPage.next as string, bearer.ann);
    expect(mine.status).toBe(200);
    // After the admin's 4th row (a NULL-first order), only rows the user's where admits.
    const all = await sql('SELECT id, a, b, dup FROM p ORDER BY a, id');
    const expected = all
      .slice(4)
      .filter((row) => row.dup === 1)
      .slice(0, 4)
      .map(({ a, b }) => ({ a, b }));
    expect(mine.body).toEqual(expected);
  });

  test('without a token the link is no way in', async () => {
    const adminPage = await get(`${auth.url}/table/p/read?$top=2`, bearer.root);
    expect((await get(adminPage.next as string)).status).toBe(401);
  });
});
