/**
 * /docs in a real browser (Debian's chromium driven by playwright-core), in auth mode: the page
 * loads without a token and shows only the login description; logging in through "Try it out"
 * loads every table; a read with a $filter through "Try it out" shows the right rows; Logout goes
 * back, and a token pasted in "Authorize" loads everything again. Nothing is fetched from any
 * origin but the gateway's. In open mode, names with a space or letters beyond ASCII show as
 * written and "Try it out" reads them. Without a browser: fails under CI, skips with a message
 * elsewhere.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
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
const ARTIFACTS = path.resolve('test/artifacts');
const EMAIL = 'docs@example.com';
const PASSWORD = 'browser test password';

const FIXTURE = `
CREATE TABLE products (
  id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  price DECIMAL(10, 2) NOT NULL,
  added DATE NULL
);
INSERT INTO products (name, price, added) VALUES
  ('Green tea', 6.50, '2024-01-02'), ('Earl Grey tea', 12.90, NULL),
  ('Teapot', 49.00, '2024-03-04'), ('Crème brûlée set', 19.99, NULL);
CREATE TABLE \`zip codes\` (id INT PRIMARY KEY, city VARCHAR(40) NOT NULL);
INSERT INTO \`zip codes\` VALUES (1, 'Köln'), (2, 'Lyon');
CREATE TABLE \`größe\` (id INT PRIMARY KEY, label VARCHAR(10) NOT NULL);
INSERT INTO \`größe\` VALUES (1, 'XL');
`;

// Under CI a missing browser fails the test; elsewhere it is skipped and named in the summary.
const run = testIf(
  BROWSER !== undefined || Boolean(process.env.CI),
  'no /usr/bin/chromium (apt-get install chromium)',
);

let db: TestDatabase;
let server: TestGateway;
let openServer: TestGateway;
let context: BrowserContext;
let profile: string;

beforeAll(async () => {
  if (!BROWSER) return;
  db = await createTestDatabase(FIXTURE);
  server = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: 'browser-test-secret-0123456789abcdefghijkl',
  });
  const registered = await fetch(`${server.url}/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
  });
  expect(registered.status).toBe(200);
  openServer = await startTestGateway(db.name);
  profile = await mkdtemp(path.join(os.tmpdir(), 'tablegate-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: BROWSER,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  });
}, 60_000);

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await server?.close();
  await openServer?.close();
  await db?.drop();
});

/** Opens an operation's block, presses "Try it out", and gives back the block. */
async function tryItOut(page: Page, id: string) {
  const block = page.locator(`#${id}`);
  await block.locator('.opblock-summary').first().click();
  await block.getByRole('button', { name: 'Try it out' }).click();
  return block;
}

run(
  'log in through the page, then read with a $filter through "Try it out"',
  async () => {
    if (!BROWSER) throw new Error('no browser: apt-get install chromium (/usr/bin/chromium)');
    const page = await context.newPage();
    const origin = new URL(server.url).origin;
    const foreign: string[] = [];
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(origin) && !/^(data|blob):/.test(url)) foreign.push(url);
    });
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));

    // Without a token: the login description only, no table.
    await page.goto(`${server.url}/docs`);
    await page.locator('#operations-auth-login').waitFor();
    expect(await page.locator('#operations-products-read_products').count()).toBe(0);
    await expect(fetch(`${server.url}/openapi.json`).then((r) => r.status)).resolves.toBe(401);

    // Log in through "Try it out": the page takes the token and shows every table.
    const login = await tryItOut(page, 'operations-auth-login');
    await login
      .locator('textarea.body-param__text')
      .fill(JSON.stringify({ email: EMAIL, password: PASSWORD }));
    await login.getByRole('button', { name: 'Execute' }).click();
    await page.locator('#operations-products-read_products').waitFor({ timeout: 15_000 });
    await page.locator('.btn.authorize.locked').waitFor();

    // A filtered read through "Try it out".
    const read = await tryItOut(page, 'operations-products-read_products');
    await read
      .locator('tr[data-param-name="$filter"] input')
      .fill("price lt 20 and contains(name,'tea')");
    await read.locator('tr[data-param-name="$orderby"] input').fill('price desc');
    await read.getByRole('button', { name: 'Execute' }).click();
    const status = read.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    expect((await status.textContent())?.trim()).toBe('200');
    const body = JSON.parse(
      (await read
        .locator('.live-responses-table .response-col_description pre')
        .first()
        .textContent()) ?? '',
    );
    expect(body).toEqual([
      { id: 2, name: 'Earl Grey tea', price: 12.9, added: null },
      { id: 1, name: 'Green tea', price: 6.5, added: '2024-01-02' },
    ]);
    expect(await read.locator('.request-url pre').textContent()).toContain(
      '%24filter=price%20lt%2020',
    );

    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'docs-read.png'), fullPage: false });

    // Logout: back to the login description. A token pasted in "Authorize" brings the rest back.
    const token = (
      (await (
        await fetch(`${server.url}/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
        })
      ).json()) as { token: string }
    ).token;
    await page.locator('.btn.authorize').click();
    const dialog = page.locator('.dialog-ux');
    await dialog.locator('button', { hasText: 'Logout' }).click();
    await page.locator('#operations-products-read_products').waitFor({ state: 'detached' });
    await dialog.locator('input[type="text"], input[type="password"]').first().fill(token);
    await dialog.locator('button.authorize', { hasText: 'Authorize' }).click();
    await page.locator('#operations-products-read_products').waitFor({ timeout: 15_000 });
    await dialog.locator('button', { hasText: 'Close' }).first().click();

    expect(failures).toEqual([]);
    expect(foreign).toEqual([]);
  },
  90_000,
);

run('open mode: the page shows every table at once', async () => {
  if (!BROWSER) throw new Error('no browser: apt-get install chromium (/usr/bin/chromium)');
  const page = await context.newPage();
  await page.goto(`${openServer.url}/docs/`);
  await page.locator('#operations-products-read_products').waitFor({ timeout: 15_000 });
  expect(await page.locator('.btn.authorize').count()).toBe(0);
  expect(await page.locator('#operations-auth-login').count()).toBe(0);
  await page.close();
});

run(
  'names with a space or letters beyond ASCII: shown as written, read through "Try it out"',
  async () => {
    if (!BROWSER) throw new Error('no browser: apt-get install chromium (/usr/bin/chromium)');
    const page = await context.newPage();
    const sent: string[] = [];
    page.on('request', (request) => sent.push(new URL(request.url()).pathname));
    await page.goto(`${openServer.url}/docs/`);
    const summaryPath = (path: string) =>
      page.locator(`.opblock-summary-path[data-path="${path}"]`);
    await summaryPath('/table/zip codes/read').waitFor({ timeout: 15_000 });
    expect(await summaryPath('/table/zip codes/read').textContent()).toBe('/table/zip codes/read');
    expect(await summaryPath('/table/größe/read({key},{value})').textContent()).toBe(
      '/table/größe/read({key},{value})',
    );

    // "Try it out" sends the name percent-encoded, as the gateway takes it.
    const block = page.locator('.opblock', { has: summaryPath('/table/zip codes/read') });
    await block.locator('.opblock-summary').first().click();
    await block.getByRole('button', { name: 'Try it out' }).click();
    await block.locator('tr[data-param-name="$orderby"] input').fill('id');
    await block.getByRole('button', { name: 'Execute' }).click();
    const status = block.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    expect((await status.textContent())?.trim()).toBe('200');
    const body = JSON.parse(
      (await block
        .locator('.live-responses-table .response-col_description pre')
        .first()
        .textContent()) ?? '',
    );
    expect(body).toEqual([
      { id: 1, city: 'Köln' },
      { id: 2, city: 'Lyon' },
    ]);
    expect(sent).toContain('/table/zip%20codes/read');
    await page.close();
  },
);
