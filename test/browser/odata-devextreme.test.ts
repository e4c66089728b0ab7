/**
 * DevExtreme's ODataStore (`devextreme/common/data/odata/store`, `version: 4`) in a real browser
 * (Debian's chromium driven by playwright-core), with the browser's own XMLHttpRequest, against
 * the gateway (docs/odata.md): `load` with filter, sort, skip, take and requireTotalCount, `byKey`,
 * `insert`, `update` (PATCH) and `remove`, in open mode and as the clerk (the token set in
 * `beforeSend`, as DevExtreme's documentation does it). The page comes from an origin of its own
 * (a small server that serves DevExtreme's ES modules as they are in node_modules), so every call
 * is a cross-origin one, as from an app's own site: the gateway runs with `--cors-origin` naming
 * the page. Without a browser: the tests fail under CI and are skipped with a message elsewhere.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect } from '@jest/globals';
import { type Browser, chromium, type Page } from 'playwright-core';
import {
  CASES,
  expectedProduct,
  MODES,
  PRODUCTS,
  productRow,
  recorded,
  type Target,
  targetOf,
  useConsumerFixture,
  ZIP,
} from '../helpers/odata-consumers.js';
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
const inBrowser = testIf(
  BROWSER !== undefined || Boolean(process.env.CI),
  'no /usr/bin/chromium (apt-get install chromium)',
);

/** DevExtreme's ES modules import each other without extensions, as a bundler would resolve them. */
const DEVEXTREME = path.resolve('node_modules/devextreme/esm');

/**
 * The app's origin: `/` a blank page, `/dx/…` DevExtreme's modules. A path without `.js` is
 * redirected to the file it names (`x.js` or `x/index.js`), so the browser resolves the module's
 * own relative imports against the right folder.
 */
const app = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://app');
  if (!url.pathname.startsWith('/dx/')) {
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>app</title>');
    return;
  }
  const file = path.join(DEVEXTREME, url.pathname.slice(4));
  if (!file.startsWith(DEVEXTREME)) {
    response.writeHead(404).end();
    return;
  }
  if (file.endsWith('.js') && existsSync(file)) {
    response.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(file));
    return;
  }
  const found = [`${file}.js`, path.join(file, 'index.js')].find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
  if (!found) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(302, { location: `/dx/${path.relative(DEVEXTREME, found)}` }).end();
});

let origin = '';
let browser: Browser | undefined;
let page: Page | undefined;
let profile: string | undefined;

beforeAll(async () => {
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
});

// Started after the page's origin is known: the gateway names it in --cors-origin.
const fixture = useConsumerFixture(() => ({ corsOrigin: origin }));

afterAll(async () => {
  await browser?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  app.close();
});

async function openPage(): Promise<Page> {
  if (page) return page;
  if (!BROWSER) throw new Error('no browser: apt-get install chromium (/usr/bin/chromium)');
  profile = await mkdtemp(path.join(os.tmpdir(), 'tablegate-chromium-'));
  browser = await chromium.launch({ executablePath: BROWSER, headless: true, args: ARGS });
  page = await browser.newPage();
  await page.goto(`${origin}/`);
  return page;
}

/**
 * Runs `body` in the page with `store`, an ODataStore on the target's products (key `id`,
 * Int32), and gives back what it returns; a rejected DevExtreme deferred comes back as an error
 * with its message and HTTP status.
 */
async function inPage<T>(target: Target, body: string): Promise<T> {
  const p = await openPage();
  const outcome = await p.evaluate(
    async ({ url, headers, body }) => {
      const module = '/dx/common/data/odata/store.js';
      const { default: ODataStore } = await import(module);
      const store = new ODataStore({
        url,
        key: 'id',
        keyType: 'Int32',
        version: 4,
        deserializeDates: true,
        beforeSend: (request: { headers: Record<string, string> }) => {
          Object.assign(request.headers, headers);
        },
      });
      /** A DevExtreme deferred as a promise of all its done arguments. */
      const settle = (deferred: {
        done: (f: (...a: unknown[]) => void) => { fail: (f: (e: unknown) => void) => void };
      }) =>
        new Promise<unknown[]>((resolve, reject) => {
          deferred.done((...args: unknown[]) => resolve(args)).fail(reject);
        });
      try {
        // The case's own code, written in this file.
        const run = new Function('store', 'settle', `return (async () => { ${body} })();`);
        return { ok: true, value: JSON.parse(JSON.stringify(await run(store, settle))) };
      } catch (error) {
        const e = error as { message?: string; httpStatus?: number; errorDetails?: unknown };
        return {
          ok: false,
          value: {
            message: e?.message ?? String(error),
            httpStatus: e?.httpStatus,
            details: e?.errorDetails,
          },
        };
      }
    },
    { url: `${target.service}products`, headers: target.headers, body },
  );
  if (!outcome.ok) throw new Error(`DevExtreme: ${JSON.stringify(outcome.value)}`);
  return outcome.value as T;
}

type Row = { id: number } & Record<string, unknown>;
const ids = (rows: Row[]) => rows.map((row) => row.id);

describe.each(MODES)('DevExtreme ODataStore in Chromium, %s', (mode) => {
  inBrowser('load: every product; dates as Date objects', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const [rows] = await inPage<[Row[]]>(
        t,
        `const [rows] = await settle(store.load());
         return [rows.map((r) => ({ ...r, added_at: r.added_at instanceof Date ? r.added_at.toISOString() : 'not a Date' }))];`,
      );
      expect(ids(rows)).toEqual(PRODUCTS.map((p) => p.id));
      expect(rows[2]).toEqual(
        expect.objectContaining({
          ...expectedProduct(3),
          added_at: '2026-01-03T08:30:00.000Z',
        }),
      );
      // The clerk's policy hides the cost.
      expect(rows[2]?.cost).toBe(mode === 'open' ? 1.5 : undefined);
    });
  });

  inBrowser('load with filter, also by a mapped name', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const [filtered, byZip] = await inPage<[Row[], Row[]]>(
        t,
        `const [a] = await settle(store.load({ filter: ['price', '>', 10] }));
         const [b] = await settle(store.load({ filter: ['${ZIP}', '=', '10005'] }));
         return [a, b];`,
      );
      expect(ids(filtered)).toEqual(CASES.filtered);
      expect(ids(byZip)).toEqual(CASES.byZip);
    });
  });

  inBrowser('load with sort, skip and take', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const [page] = await inPage<[Row[]]>(
        t,
        `const [rows] = await settle(store.load({ sort: [{ selector: 'price', desc: true }], skip: 2, take: 3 }));
         return [rows];`,
      );
      expect(ids(page)).toEqual(CASES.paged);
    });
  });

  inBrowser('load with requireTotalCount, and totalCount', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const [rows, extra, total] = await inPage<[Row[], { totalCount: number }, number]>(
        t,
        `const [rows, extra] = await settle(store.load({ filter: ['price', '>', 10], take: 2, requireTotalCount: true }));
         const [total] = await settle(store.totalCount({ filter: ['price', '>', 10] }));
         return [rows, extra, total];`,
      );
      expect(ids(rows)).toEqual(CASES.filtered.slice(0, 2));
      expect(extra.totalCount).toBe(CASES.count);
      expect(total).toBe(CASES.count);
    });
  });

  inBrowser('byKey', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const [one] = await inPage<[Row]>(t, 'return await settle(store.byKey(9));');
      expect(one).toEqual(expect.objectContaining(expectedProduct(9)));
    });
  });

  inBrowser('insert, update (PATCH) and remove', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const [created] = await inPage<[Row]>(
        t,
        `return await settle(store.insert({ name: 'DevExtreme ${mode}', price: 8.25, ${ZIP}: '82828', added_at: new Date('2026-07-08T09:10:11Z') }));`,
      );
      const id = created.id;
      expect(id).toBeGreaterThan(12);
      expect(await productRow(fixture.db, id)).toEqual(
        expect.objectContaining({
          name: `DevExtreme ${mode}`,
          price: '8.25',
          added_at: '2026-07-08 09:10:11',
        }),
      );
      await inPage(t, `return await settle(store.update(${id}, { price: 18.25 }));`);
      expect((await productRow(fixture.db, id))?.price).toBe('18.25');
      expect(
        t.proxy.exchanges.some(
          (e) => e.method === 'PATCH' && e.status !== undefined && e.status < 300,
        ),
      ).toBe(true);
      await inPage(t, `return await settle(store.remove(${id}));`);
      expect(await productRow(fixture.db, id)).toBeUndefined();
    });
  });
});
