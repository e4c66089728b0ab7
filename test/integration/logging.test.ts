/**
 * Logs (docs/errors.md): one JSON line per request, and never a password, a token or an
 * Authorization header — checked on the real process's stdout at log level info.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/demo/private-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testServer } from '../helpers/mysql-url.js';

let db: TestDatabase;
let home: string;
let child: ChildProcess;
let output = '';
let url: string;

beforeAll(async () => {
  db = await createTestDatabase('CREATE TABLE notes (id INT PRIMARY KEY, body TEXT)');
  home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-logs-'));
  const server = testServer();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  child = spawn(process.execPath, [path.resolve('dist/cli.js'), 'run', 'auth'], {
    env: {
      PATH: process.env.PATH,
      HOME: home,
      TABLEGATE_DB_HOST: server.host,
      TABLEGATE_DB_USER: server.user,
      TABLEGATE_DB_PASSWORD: server.password,
      TABLEGATE_DB_PORT: String(server.port),
      TABLEGATE_DB_NAME: db.name,
      TABLEGATE_LISTEN_PORT: String(port),
      TABLEGATE_LOG_LEVEL: 'info',
    },
  });
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (output.includes('tablegate listening')) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
});

afterAll(async () => {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  await db.drop();
  await rm(home, { recursive: true, force: true });
});

test('one JSON line per request, and no secret in any line', async () => {
  const password = 'Sup3r-Secret-Passw0rd';
  const credentials = JSON.stringify({ email: 'logs@example.com', password });
  const post = (route: string) =>
    fetch(url + route, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: credentials,
    });
  expect((await post('/auth/register')).status).toBe(200);
  const { token } = (await (await post('/auth/login')).json()) as { token: string };
  const read = await fetch(`${url}/table/notes/read?$top=1`, {
    headers: { Authorization: `Bearer ${token}`, Cookie: 'session=cookie-secret' },
  });
  expect(read.status).toBe(200);
  await fetch(`${url}/table/notes/read`, { headers: { Authorization: 'Bearer not.a.token' } });
  // A token in the query string is refused, and not logged either.
  const inQuery = await fetch(`${url}/table/notes/read?$top=1&access_token=${token}`);
  expect(inQuery.status).toBe(401);
  await new Promise((r) => setTimeout(r, 200));

  const lines = output.split('\n').filter((line) => line.startsWith('{'));
  const requests = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'request');
  expect(requests.map((r) => [r.method, r.url.split('?')[0], r.status])).toEqual([
    ['POST', '/auth/register', 200],
    ['POST', '/auth/login', 200],
    ['GET', '/table/notes/read', 200],
    ['GET', '/table/notes/read', 401],
    ['GET', '/table/notes/read', 401],
  ]);
  expect(requests[4].url).toBe('/table/notes/read?$top=1&access_token=[redacted]');
  // Each line names its request: the id Fastify gave it, in the place a child logger put it.
  expect(new Set(requests.map((r) => r.reqId)).size).toBe(5);
  for (const r of requests) {
    expect(r.reqId).toMatch(/^req-\d+$/);
    expect(Object.keys(r)).toEqual([
      'level',
      'time',
      'pid',
      'hostname',
      'reqId',
      'method',
      'url',
      'status',
      'ms',
      'ip',
      'msg',
    ]);
  }
  for (const secret of [password, token, token.split('.')[2], 'cookie-secret', 'not.a.token']) {
    expect(output).not.toContain(secret);
  }
});
