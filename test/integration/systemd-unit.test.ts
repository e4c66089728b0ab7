/**
 * deploy/systemd/tablegate.service, the example unit the README offers: systemd's own checker
 * accepts it, it runs the gateway process itself (never npx), every variable of its example
 * environment file is one tablegate reads, and the command line it runs starts the gateway from
 * that file and stops it with exit code 0 on SIGTERM.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENVIRONMENT } from '../../src/cli/options.js';
import { freePort } from '../../src/demo/private-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testServer } from '../helpers/mysql-url.js';
import { testIf } from '../helpers/skip.js';

const UNIT = readFileSync('deploy/systemd/tablegate.service', 'utf8');
const ENV_FILE = readFileSync('deploy/systemd/tablegate.env.example', 'utf8');
const ANALYZE = ['/usr/bin/systemd-analyze', '/bin/systemd-analyze'].find((f) => existsSync(f));

/** `Key=value` lines of the unit (the last one wins, as in systemd, except repeated keys). */
function settings(key: string): string[] {
  return UNIT.split('\n')
    .filter((line) => line.startsWith(`${key}=`))
    .map((line) => line.slice(key.length + 1));
}

function envFile(): Record<string, string> {
  return Object.fromEntries(
    ENV_FILE.split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

let work: string;
beforeAll(() => {
  work = mkdtempSync(path.join(os.tmpdir(), 'tablegate-systemd-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

testIf(ANALYZE !== undefined, 'no systemd-analyze (apt-get install systemd)')(
  'systemd-analyze verify accepts the unit, with no unknown key',
  () => {
    // verify insists that ExecStart's program exists: point it at this machine's node.
    const copy = path.join(work, 'tablegate.service');
    writeFileSync(
      copy,
      UNIT.replace(
        /^ExecStart=\S+/m,
        `ExecStart=${process.execPath} ${path.resolve('dist/cli.js')}`,
      ),
    );
    const run = spawnSync(ANALYZE as string, ['verify', copy], { encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  },
);

test('the unit runs the global binary, not npx, with secrets from a root-only EnvironmentFile', () => {
  expect(settings('ExecStart')).toEqual(['/usr/local/bin/tablegate run auth']);
  expect(settings('EnvironmentFile')).toEqual(['/etc/tablegate/tablegate.env']);
  expect(settings('User')).toEqual(['tablegate']);
  expect(settings('KillSignal')).toEqual(['SIGTERM']);
  expect(settings('RestartPreventExitStatus')).toEqual(['2']);
  for (const hardening of ['NoNewPrivileges', 'PrivateTmp', 'ProtectHome', 'RestrictSUIDSGID']) {
    expect({ hardening, value: settings(hardening) }).toEqual({ hardening, value: ['yes'] });
  }
  expect(settings('ProtectSystem')).toEqual(['strict']);
  expect(settings('CapabilityBoundingSet')).toEqual(['']);
});

test('every variable of the example environment file is one tablegate reads', () => {
  const known = new Set([...Object.values(ENVIRONMENT), 'TABLEGATE_AUTH']);
  const names = Object.keys(envFile());
  expect(names.length).toBeGreaterThan(5);
  expect(names.filter((name) => !known.has(name))).toEqual([]);
});

test('its command line starts the gateway from that file and SIGTERM stops it with exit 0', async () => {
  let db: TestDatabase | undefined;
  try {
    db = await createTestDatabase('CREATE TABLE t (id INT PRIMARY KEY)');
    const server = testServer();
    const port = await freePort();
    const [, ...args] = (settings('ExecStart')[0] as string).split(' ');
    const env = {
      ...envFile(),
      // The example's database and listener, pointed at the test server.
      TABLEGATE_DB_HOST: server.host,
      TABLEGATE_DB_PORT: String(server.port),
      TABLEGATE_DB_USER: server.user,
      TABLEGATE_DB_PASSWORD: server.password,
      TABLEGATE_DB_NAME: db.name,
      TABLEGATE_LISTEN_PORT: String(port),
      HOME: work,
      PATH: process.env.PATH,
    };
    const child = spawn(process.execPath, [path.resolve('dist/cli.js'), ...args], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    while (!stdout.includes('\n') && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(stderr).toBe('');
    expect(stdout).toMatch(
      new RegExp(
        `^tablegate listening on http://127\\.0\\.0\\.1:${port} \\(mode: auth, database: ${db.name}, 1 table`,
      ),
    );
    expect(stdout).toContain(`uploads: ${work}/.tablegate/uploads`);
    // The example closes registration.
    expect(stdout).toContain('registration: closed, policy: none, read consistency: eventual)');
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    await db?.drop();
  }
}, 30_000);
