/**
 * Finds a real MySQL server for the whole run, in this order: TABLEGATE_TEST_MYSQL_URL; a server
 * at 127.0.0.1:3306 as root with no password; a private mariadbd/mysqld from the PATH; a MySQL 8.4
 * container through testcontainers when a Docker engine answers. Fails with one line otherwise.
 * TABLEGATE_TEST_MYSQL=container skips straight to the container (`npm run test:container` runs
 * the integration flows that way); TABLEGATE_TEST_MYSQL_IMAGE names another image.
 */
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
// Jest loads global setup outside its module mapper, so this import has no .js extension.
import { startPrivateServer } from '../../src/demo/private-server';
import { formatMysqlUrl, parseMysqlUrl, type ServerAddress } from './mysql-url';

async function answers(address: ServerAddress): Promise<boolean> {
  try {
    const connection = await mysql.createConnection({ ...address, connectTimeout: 2000 });
    await connection.end();
    return true;
  } catch {
    return false;
  }
}

type Started = ServerAddress & { stop: () => Promise<unknown> };

async function startContainer(): Promise<Started> {
  const image = process.env.TABLEGATE_TEST_MYSQL_IMAGE ?? 'mysql:8.4';
  const { MySqlContainer } = await import('@testcontainers/mysql');
  const container = await new MySqlContainer(image).withRootPassword('test').start();
  const address = {
    host: container.getHost(),
    port: container.getPort(),
    user: 'root',
    password: 'test',
  };
  const connection = await mysql.createConnection(address);
  const [[row]] = (await connection.query('SELECT VERSION() AS v')) as unknown as [[{ v: string }]];
  await connection.end();
  // Jest prints nothing of a global setup otherwise: this says which server the run used.
  process.stdout.write(
    `\ntests: ${image} started by testcontainers at ${address.host}:${address.port}, server ${row.v}\n`,
  );
  return { ...address, stop: () => container.stop() };
}

async function fromContainer(): Promise<Started | null> {
  if (!existsSync('/var/run/docker.sock') && !process.env.DOCKER_HOST) return null;
  try {
    return await startContainer();
  } catch {
    return null;
  }
}

type Cleanup = () => Promise<unknown>;
const state = globalThis as typeof globalThis & {
  tablegateTestCleanup?: Cleanup;
  tablegateTestTemporary?: string;
};

/**
 * Every temporary file of the run (state and upload directories, private servers, the CLIs the
 * tests start) goes under one directory of its own, which global-teardown.ts removes: a run
 * leaves nothing in the system's temporary directory, whatever a test left behind.
 */
async function runTemporaryDirectory(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'tablegate-tests-'));
  process.env.TMPDIR = root;
  state.tablegateTestTemporary = root;
}

export default async function globalSetup(): Promise<void> {
  // The integration and fuzz tiers both name this setup; in a run of both, Jest calls it once
  // per tier in one process: the second call finds the run set up.
  if (state.tablegateTestTemporary !== undefined) return;
  await runTemporaryDirectory();
  if (process.env.TABLEGATE_TEST_MYSQL === 'container') {
    const container = await startContainer();
    process.env.TABLEGATE_TEST_MYSQL_URL = formatMysqlUrl(container);
    state.tablegateTestCleanup = container.stop;
    return;
  }
  const given = process.env.TABLEGATE_TEST_MYSQL_URL;
  if (given) {
    if (!(await answers(parseMysqlUrl(given)))) {
      throw new Error(`TABLEGATE_TEST_MYSQL_URL=${given} does not answer`);
    }
    return;
  }
  const local = { host: '127.0.0.1', port: 3306, user: 'root', password: '' };
  if (await answers(local)) {
    process.env.TABLEGATE_TEST_MYSQL_URL = formatMysqlUrl(local);
    return;
  }
  try {
    const server = await startPrivateServer();
    process.env.TABLEGATE_TEST_MYSQL_URL = formatMysqlUrl(server);
    state.tablegateTestCleanup = () => server.destroy();
    return;
  } catch {
    // No server binary, or it would not start: try a container.
  }
  const container = await fromContainer();
  if (container) {
    process.env.TABLEGATE_TEST_MYSQL_URL = formatMysqlUrl(container);
    state.tablegateTestCleanup = container.stop;
    return;
  }
  throw new Error(
    'No MySQL server for the tests: set TABLEGATE_TEST_MYSQL_URL=mysql://user:pass@host:port, run MariaDB on 127.0.0.1:3306 (root, no password), install mariadb-server, or start Docker.',
  );
}
