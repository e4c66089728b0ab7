/**
 * The image's production start without Docker: the run stage reproduced in a temporary
 * directory (package.json, package-lock.json, the Dockerfile's own `npm ci --omit=dev …`, dist/,
 * /usr/local/bin/tablegate), started through docker/entrypoint.sh with no arguments and the
 * configuration in TABLEGATE_* variables alone, against the compose file's example schema. Then
 * the README's Docker walk-through: health, register, login, read, create, upload, the file back,
 * the Dockerfile's HEALTHCHECK command, and a clean exit on SIGTERM.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/demo/private-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { envOf, execForm, productionInstall, REPO, runStage, stepsOf } from '../helpers/image.js';
import { testServer } from '../helpers/mysql-url.js';

const NPM_CI_TIMEOUT_MS = 240_000;
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery';

let work: string;
let app: string;
let home: string;
let db: TestDatabase;
let child: ChildProcess;
let exited: Promise<number | null>;
let base: string;
let port: number;
let startLine: string;
let token: string;

/** npm's own variables from the jest run (npm test) must not steer the nested install. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.toLowerCase().startsWith('npm_')),
  );
}

function startThroughEntrypoint(env: NodeJS.ProcessEnv): Promise<string> {
  const bin = path.join(work, 'usr-local-bin');
  const cmd = execForm(stepsOf(runStage(), 'CMD')[0]?.args ?? '[]');
  child = spawn('sh', [path.join(REPO, 'docker/entrypoint.sh'), ...cmd], {
    cwd: app,
    env: { PATH: `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin`, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (d) => (stderr += d));
    child.stdout?.on('data', (d) => {
      stdout += d;
      const line = stdout.split('\n').find((l) => l.startsWith('tablegate listening'));
      if (line) resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`tablegate exited ${code}: ${stderr}`)));
  });
}

beforeAll(async () => {
  const dist = path.join(REPO, 'dist/cli.js');
  if (!existsSync(dist)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  work = mkdtempSync(path.join(os.tmpdir(), 'tablegate-image-'));
  app = path.join(work, 'app');
  home = path.join(work, 'home-node');
  mkdirSync(app);
  // WORKDIR /app; COPY package.json package-lock.json ./; RUN npm ci --omit=dev …
  for (const file of ['package.json', 'package-lock.json']) {
    cpSync(path.join(REPO, file), path.join(app, file));
  }
  const [command, ...args] = productionInstall();
  const install = spawnSync(command as string, args, {
    cwd: app,
    env: cleanEnv(),
    encoding: 'utf8',
    timeout: NPM_CI_TIMEOUT_MS,
  });
  if (install.status !== 0) {
    throw new Error(
      `${productionInstall().join(' ')} failed (${install.status ?? install.signal}):\n${install.stderr}`,
    );
  }
  // COPY --from=build /app/dist ./dist (built with chmod 0755 dist/cli.js), the tablegate link,
  // and the node user's state directory.
  cpSync(path.join(REPO, 'dist'), path.join(app, 'dist'), { recursive: true });
  chmodSync(path.join(app, 'dist/cli.js'), 0o755);
  mkdirSync(path.join(work, 'usr-local-bin'));
  symlinkSync(path.join(app, 'dist/cli.js'), path.join(work, 'usr-local-bin/tablegate'));
  mkdirSync(path.join(home, '.tablegate/uploads'), { recursive: true, mode: 0o700 });

  db = await createTestDatabase(
    readFileSync(path.join(REPO, 'docker/initdb/01-example.sql'), 'utf8'),
  );
  const server = testServer();
  port = await freePort();
  // The image's ENV, then what docker-compose.yml sets (its db host, port and secrets).
  startLine = await startThroughEntrypoint({
    ...envOf(runStage()),
    HOME: home,
    TABLEGATE_AUTH: 'true',
    TABLEGATE_DB_HOST: server.host,
    TABLEGATE_DB_PORT: String(server.port),
    TABLEGATE_DB_USER: server.user,
    TABLEGATE_DB_PASSWORD: server.password,
    TABLEGATE_DB_NAME: db.name,
    TABLEGATE_JWT_SECRET: randomBytes(32).toString('base64url'),
    TABLEGATE_LISTEN_PORT: String(port),
    TABLEGATE_LOG_LEVEL: 'warn',
  });
  base = `http://127.0.0.1:${port}`;
}, NPM_CI_TIMEOUT_MS + 60_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
  await db?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function call(method: string, url: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  if (typeof init.body === 'string') headers.set('content-type', 'application/json');
  const response = await fetch(`${base}${url}`, { ...init, method, headers });
  return { status: response.status, text: await response.text() };
}

test('the entrypoint execs node itself: tablegate is the process that gets the signals', () => {
  // sh → exec tablegate → (#!/usr/bin/env node) exec node: one process, tini's child in the image.
  expect(readlinkSync(`/proc/${child.pid}/exe`)).toBe(realpathSync(process.execPath));
});

test('starts in auth mode from the environment alone, uploads under $HOME/.tablegate', () => {
  expect(startLine).toBe(
    `tablegate listening on http://localhost:${port} (mode: auth, database: ${db.name}, ` +
      `4 tables and 1 view, uploads: ${path.join(home, '.tablegate/uploads')}, registration: open, policy: none, read consistency: eventual)`,
  );
});

test('GET /health answers without a token; the Dockerfile HEALTHCHECK command passes', async () => {
  expect(await call('GET', '/health')).toEqual({ status: 200, text: '{"status":"ok"}' });
  const [health] = stepsOf(runStage(), 'HEALTHCHECK');
  const [node, ...args] = execForm((health?.args ?? '').replace(/^CMD /, ''));
  const check = (listenPort: number) =>
    spawnSync(node === 'node' ? process.execPath : (node as string), args, {
      env: { PATH: process.env.PATH, TABLEGATE_LISTEN_PORT: String(listenPort) },
      timeout: 10_000,
    }).status;
  expect(check(port)).toBe(0);
  expect(check(await freePort())).toBe(1);
});

test('the README walk-through: register, login, read, create, upload, fetch the file', async () => {
  expect((await call('GET', '/table/products/read')).status).toBe(401);
  const credentials = JSON.stringify({ email: EMAIL, password: PASSWORD });
  expect(await call('POST', '/auth/register', { body: credentials })).toEqual({
    status: 200,
    text: '{"success":true,"message":"User register succesful"}',
  });
  const login = await call('POST', '/auth/login', { body: credentials });
  expect(login.status).toBe(200);
  token = (JSON.parse(login.text) as { token: string }).token;
  expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

  const tea = await call(
    'GET',
    "/table/products/read?$filter=category+eq+'tea'&$orderby=price+desc",
  );
  expect(tea.status).toBe(200);
  // DECIMAL(10,2) keeps its stored digits: 6.50, not 6.5.
  expect(tea.text).toBe(
    '[{"id":2,"name":"Earl Grey tea, 250 g","category":"tea","price":12.90,"stock":40,"image_url":null},' +
      '{"id":1,"name":"Green tea, 100 g","category":"tea","price":6.50,"stock":120,"image_url":null}]',
  );
  const totals = await call('GET', '/table/order_totals/read?$filter=order_id+eq+1');
  expect(JSON.parse(totals.text)).toEqual([
    {
      order_id: 1,
      customer: 'Grace Hopper',
      ordered_at: '2024-05-01 10:12:00',
      status: 'shipped',
      total: 62,
    },
  ]);

  const created = await call('POST', '/table/customers/create', {
    body: JSON.stringify({ name: 'Ada Lovelace', email: EMAIL, city: 'London' }),
  });
  expect(JSON.parse(created.text)).toEqual({
    success: true,
    message: 'Data inserted successfully',
    insertId: 5,
    affectedRows: 1,
  });

  const form = new FormData();
  form.append('files', new Blob(['hello from tablegate\n'], { type: 'text/plain' }), 'hello.txt');
  const upload = await call('POST', '/upload', { body: form });
  expect(upload.status).toBe(200);
  const [record] = (
    JSON.parse(upload.text) as { data: { filename: string; accessURL: string; path: string }[] }
  ).data;
  expect(record?.path).toBe(path.join(home, '.tablegate/uploads', record?.filename ?? ''));
  // Auth mode: a signed link (docs/auth.md), which opens without a token.
  expect(record?.accessURL).toMatch(
    new RegExp(`^${base}/@/${record?.filename}\\?exp=\\d+&sig=[A-Za-z0-9_-]{43}$`),
  );
  expect(await call('GET', `/@/${record?.filename}`)).toEqual({
    status: 200,
    text: 'hello from tablegate\n',
  });
  const linked = await fetch(record?.accessURL as string);
  expect([linked.status, await linked.text()]).toEqual([200, 'hello from tablegate\n']);
});

test('with TABLEGATE_JWT_SECRET set it writes nothing but uploads (a read-only root is fine)', () => {
  const uploads = path.join('.tablegate', 'uploads');
  const written = readdirSync(home, { recursive: true }).map(String).sort();
  expect(written.filter((f) => !f.startsWith(`${uploads}${path.sep}`))).toEqual([
    '.tablegate',
    uploads,
  ]);
});

test('SIGTERM: it stops and exits 0', async () => {
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
});
