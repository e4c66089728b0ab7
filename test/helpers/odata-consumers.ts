/**
 * The fixture every OData consumer test (test/integration/odata-consumers-*.test.ts and
 * test/browser/odata-devextreme.test.ts) runs against: a small shop (products with a DECIMAL
 * price, a DATETIME and a column named `zip code`; orders → order_items by foreign key), served
 * by two real gateways on one database: open mode, and auth mode with a policy under which the
 * role `clerk` may read and write products but not see their `cost`, and `boss` may do anything.
 * Each library reaches the gateway through a recording proxy on loopback, so a failing case shows
 * what the library sent and what the gateway answered, byte for byte.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll } from '@jest/globals';
import type { Config } from '../../src/config.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { signUpAs, startTestGateway, type TestGateway } from './gateway.js';

/** The seed: 12 products, ids 1…12. */
export const PRODUCTS = Array.from({ length: 12 }, (_, index) => {
  const id = index + 1;
  const two = String(id).padStart(2, '0');
  return {
    id,
    name: `Product ${two}`,
    /** DECIMAL(10,2): 1.25, 2.50, … 15.00, as a number. */
    price: id * 1.25,
    zip: String(10_000 + id),
    /** DATETIME, written in UTC (the gateways run in the test process's zone: see `zone`). */
    addedAt: `2026-01-${two}T08:30:00`,
    cost: id * 0.5,
  };
});

export const FIXTURE_SQL = `
CREATE TABLE products (
  id INT AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(60) NOT NULL,
  price DECIMAL(10,2) NOT NULL,
  \`zip code\` VARCHAR(10) NULL,
  added_at DATETIME NOT NULL,
  cost DECIMAL(10,2) NULL
);
CREATE TABLE orders (
  id INT AUTO_INCREMENT PRIMARY KEY,
  customer VARCHAR(40) NOT NULL,
  placed_at DATETIME NOT NULL
);
CREATE TABLE order_items (
  id INT AUTO_INCREMENT PRIMARY KEY,
  order_id INT NOT NULL,
  product_id INT NOT NULL,
  quantity INT NOT NULL,
  CONSTRAINT fk_item_order FOREIGN KEY (order_id) REFERENCES orders (id),
  CONSTRAINT fk_item_product FOREIGN KEY (product_id) REFERENCES products (id)
);
INSERT INTO products (id, name, price, \`zip code\`, added_at, cost) VALUES
${PRODUCTS.map((p) => `(${p.id}, '${p.name}', ${p.price.toFixed(2)}, '${p.zip}', '${p.addedAt.replace('T', ' ')}', ${p.cost.toFixed(2)})`).join(',\n')};
INSERT INTO orders (id, customer, placed_at) VALUES
  (1, 'Ada', '2026-02-01 09:00:00'), (2, 'Grace', '2026-02-02 10:00:00');
INSERT INTO order_items (id, order_id, product_id, quantity) VALUES
  (1, 1, 1, 2), (2, 1, 3, 1), (3, 2, 2, 5);
`;

/** The OData identifier of `zip code` (docs/odata.md: XML's `_xHHHH_` escape). */
export const ZIP = 'zip_x0020_code';

export const POLICY = {
  roles: {
    clerk: {
      tables: {
        products: {
          read: { columns: ['id', 'name', 'price', 'zip code', 'added_at'] },
          create: { columns: ['name', 'price', 'zip code', 'added_at'] },
          update: { columns: ['name', 'price', 'zip code', 'added_at'] },
          delete: true,
        },
        orders: { read: true },
        order_items: { read: true },
      },
    },
    boss: {
      tables: { '*': { read: true, create: true, update: true, delete: true } },
    },
  },
};

export const CLERK = { email: 'clerk@consumers.example', password: 'clerk password 1' };
export const BOSS = { email: 'boss@consumers.example', password: 'boss password 1' };

/** One way in: where the service is and the headers that say who calls. */
export interface Target {
  /** open, bearer (a clerk's token), basic (the clerk's email and password). */
  readonly mode: 'open' | 'bearer' | 'basic';
  /** The service root, through the recording proxy, with its trailing slash: `http://…/odata/`. */
  readonly service: string;
  /** The gateway's own origin (no proxy), for checks the test makes itself. */
  readonly direct: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The basic target's email and password, for libraries that make the header themselves. */
  readonly credentials?: { readonly email: string; readonly password: string };
  /** What went through the proxy since the last `clear()`. */
  readonly proxy: RecordingProxy;
}

export interface ConsumerFixture {
  readonly db: TestDatabase;
  readonly open: TestGateway;
  readonly auth: TestGateway;
  readonly targets: readonly Target[];
  readonly tokens: { readonly clerk: string; readonly boss: string };
  close(): Promise<void>;
}

/** Basic authentication on `/odata/` (docs/odata-batch.md): the clerk's email and password. */
export const BASIC_AUTH = true;

/** The modes each consumer runs in, for `describe.each`. */
export const MODES: readonly Target['mode'][] = BASIC_AUTH
  ? ['open', 'bearer', 'basic']
  : ['open', 'bearer'];

export function targetOf(fixture: ConsumerFixture, mode: Target['mode']): Target {
  const target = fixture.targets.find((t) => t.mode === mode);
  if (!target) throw new Error(`no ${mode} target`);
  return target;
}

export function basic(credentials: { email: string; password: string }): string {
  return `Basic ${Buffer.from(`${credentials.email}:${credentials.password}`).toString('base64')}`;
}

export async function startConsumerFixture(
  overrides: Partial<Config> = {},
): Promise<ConsumerFixture> {
  const db = await createTestDatabase(FIXTURE_SQL);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-odata-consumers-'));
  const policyFile = path.join(dir, 'policy.json');
  await writeFile(policyFile, JSON.stringify(POLICY));
  const open = await startTestGateway(db.name, overrides);
  const auth = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: 'odata consumers secret, long enough to sign tokens',
    policyFile,
    ...overrides,
  });
  const clerk = (await signUpAs(auth.url, db.admin, CLERK, 'clerk')).token;
  const boss = (await signUpAs(auth.url, db.admin, BOSS, 'boss')).token;
  const openProxy = await startRecordingProxy(open.url);
  const authProxy = await startRecordingProxy(auth.url);
  const targets: Target[] = [
    {
      mode: 'open',
      service: `${openProxy.url}/odata/`,
      direct: open.url,
      headers: {},
      proxy: openProxy,
    },
    {
      mode: 'bearer',
      service: `${authProxy.url}/odata/`,
      direct: auth.url,
      headers: { Authorization: `Bearer ${clerk}` },
      proxy: authProxy,
    },
  ];
  if (BASIC_AUTH) {
    targets.push({
      mode: 'basic',
      service: `${authProxy.url}/odata/`,
      direct: auth.url,
      headers: { Authorization: basic(CLERK) },
      credentials: CLERK,
      proxy: authProxy,
    });
  }
  return {
    db,
    open,
    auth,
    targets,
    tokens: { clerk, boss },
    close: async () => {
      await openProxy.close();
      await authProxy.close();
      await open.close();
      await auth.close();
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The fixture's life in a test file: started before its tests (with `overrides`, asked for then,
 * so they may name what an earlier `beforeAll` started), closed after them, and the products put
 * back after each test. What it gives back reads the started fixture; use it inside tests only.
 */
export function useConsumerFixture(overrides: () => Partial<Config> = () => ({})): ConsumerFixture {
  let started: ConsumerFixture | undefined;
  beforeAll(async () => {
    started = await startConsumerFixture(overrides());
  }, 60_000);
  afterAll(async () => {
    await started?.close();
  });
  afterEach(async () => {
    if (started) await resetProducts(started.db);
  });
  const current = (): ConsumerFixture => {
    if (!started) throw new Error('the OData consumer fixture is not started');
    return started;
  };
  // Each property read goes to the fixture started in beforeAll.
  return new Proxy({} as ConsumerFixture, {
    get: (_, key) => Reflect.get(current(), key),
  });
}

/** Puts the products back as seeded (a failed case may leave a created row behind). */
export async function resetProducts(db: TestDatabase): Promise<void> {
  await db.admin.query('DELETE FROM products WHERE id > 12');
  await db.admin.query(
    `UPDATE products SET name = CONCAT('Product ', LPAD(id, 2, '0')), price = id * 1.25, \`zip code\` = 10000 + id`,
  );
}

/** A product row as MariaDB has it, for checking what a library wrote. */
export async function productRow(db: TestDatabase, id: number) {
  const [rows] = (await db.admin.query(
    'SELECT id, name, price, `zip code` AS zip, added_at, cost FROM products WHERE id = ?',
    [id],
  )) as unknown as [Record<string, unknown>[]];
  return rows[0];
}

export interface Exchange {
  readonly method: string;
  readonly url: string;
  readonly requestHeaders: http.IncomingHttpHeaders;
  readonly requestBody: string;
  status?: number;
  responseHeaders?: http.IncomingHttpHeaders;
  responseBody?: string;
}

export interface RecordingProxy {
  readonly url: string;
  readonly exchanges: Exchange[];
  clear(): void;
  /** The exchanges as text: method, URL, headers and body each way. */
  describe(): string;
  close(): Promise<void>;
}

/**
 * A loopback HTTP proxy that forwards every request to `target` unchanged (its Host header too,
 * so the gateway's absolute links point back at the proxy) and records both sides.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const exchanges: Exchange[] = [];
  const to = new URL(target);
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const exchange: Exchange = {
        method: request.method ?? 'GET',
        url: request.url ?? '/',
        requestHeaders: request.headers,
        requestBody: body.toString('utf8'),
      };
      exchanges.push(exchange);
      const outgoing = http.request(
        {
          host: to.hostname,
          port: to.port,
          method: request.method,
          path: request.url,
          headers: request.headers,
          agent: false,
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => parts.push(chunk));
          answer.on('end', () => {
            const text = Buffer.concat(parts);
            exchange.status = answer.statusCode;
            exchange.responseHeaders = answer.headers;
            exchange.responseBody = text.toString('utf8');
            response.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
            response.end(text);
          });
        },
      );
      outgoing.on('error', (error) => {
        exchange.status = 502;
        exchange.responseBody = String(error);
        response.writeHead(502).end(String(error));
      });
      outgoing.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    exchanges,
    clear: () => {
      exchanges.length = 0;
    },
    describe: () =>
      exchanges
        .map((e) =>
          [
            `> ${e.method} ${e.url}`,
            ...Object.entries(e.requestHeaders).map(([k, v]) => `> ${k}: ${v}`),
            e.requestBody ? `> ${e.requestBody}` : '',
            `< ${e.status}`,
            ...Object.entries(e.responseHeaders ?? {}).map(([k, v]) => `< ${k}: ${v}`),
            `< ${(e.responseBody ?? '').slice(0, 2000)}`,
          ]
            .filter(Boolean)
            .join('\n'),
        )
        .join('\n\n'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Runs `fn`; when it throws, the error carries what went through the proxy during it (what the
 * library sent and what the gateway answered), so a failure says which side is wrong.
 */
export async function recorded<T>(target: Target, fn: () => Promise<T>): Promise<T> {
  target.proxy.clear();
  try {
    return await fn();
  } catch (error) {
    const text = error instanceof Error ? (error.stack ?? error.message) : JSON.stringify(error);
    throw new Error(`${text}\n\n--- HTTP through the proxy ---\n${target.proxy.describe()}`);
  }
}

/** The seeded products as OData JSON has them, in the fields each test compares. */
export function expectedProducts(ids: readonly number[]) {
  return ids.map((id) => {
    const p = PRODUCTS[id - 1];
    if (!p) throw new Error(`no seeded product ${id}`);
    return { id: p.id, name: p.name, price: p.price, [ZIP]: p.zip };
  });
}

/** One seeded product as OData JSON has it, in the fields each test compares. */
export function expectedProduct(id: number) {
  return expectedProducts([id])[0] as ReturnType<typeof expectedProducts>[number];
}

/** The cases every consumer runs, with their expected ids (the seed's order is by id). */
export const CASES = {
  /** `$filter=price gt 10` */
  filtered: [9, 10, 11, 12],
  /** `$orderby=price desc&$skip=2&$top=3` */
  paged: [10, 9, 8],
  /** `$filter=zip_x0020_code eq '10005'` (the name rule in a filter) */
  byZip: [5],
  /** `$filter=price gt 10&$count=true` */
  count: 4,
} as const;
