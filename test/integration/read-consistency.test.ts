/**
 * `--read-consistency` (docs/operations.md): on a single server it starts, says in one line that
 * there is nothing to set, and serves reads and writes as usual; the Galera setting it would send
 * is accepted by MariaDB (the cluster drill runs it on a real Galera cluster); a bad level is a
 * usage error.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import mysql from 'mysql2/promise';
import { sessionSetup } from '../../src/db/pool.js';
import { freePort } from '../../src/demo/private-server.js';
import { openDatabase } from '../../src/execute/database.js';
import { builtCli, connectionFlags } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testServer } from '../helpers/mysql-url.js';
import { galeraAvailable, rootConnection, startGaleraNode } from '../helpers/private-servers.js';
import { testIf } from '../helpers/skip.js';

let db: TestDatabase;
let home: string;

beforeAll(async () => {
  db = await createTestDatabase(
    'CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY, body TEXT)',
  );
  home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-consistency-'));
});

afterAll(async () => {
  await db?.drop();
  await rm(home, { recursive: true, force: true });
});

test('--read-consistency session on a single server: one line says so, reads see the writes', async () => {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      builtCli(),
      'run',
      ...connectionFlags(db.name),
      '-o',
      String(port),
      '--read-consistency',
      'session',
    ],
    { env: { PATH: process.env.PATH, HOME: home } },
  );
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    while (!stdout.includes('tablegate listening')) {
      if (child.exitCode !== null) throw new Error(`exited: ${stdout}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const url = `http://127.0.0.1:${port}`;
    for (const body of ['one', 'two']) {
      const created = await fetch(`${url}/table/notes/create`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ body }),
      });
      expect(created.status).toBe(200);
      const read = await fetch(`${url}/table/notes/read?$filter=body eq '${body}'&$select=body`);
      expect([read.status, await read.json()]).toEqual([200, [{ body }]]);
    }
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines.find((line) => line.startsWith('tablegate listening'))).toMatch(
      /, policy: none, read consistency: session\)$/,
    );
    const said = lines.filter((line) => line.includes('read consistency session:'));
    expect(said).toHaveLength(1);
    expect(JSON.parse(said[0] as string)).toMatchObject({
      level: 30,
      msg: 'read consistency session: MySQL is a single server (no Galera, no Group Replication), whose reads always see every earlier write; nothing to set',
    });
  } finally {
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }
}, 30_000);

test('the Galera settings are accepted by MariaDB as the pool sends them', async () => {
  const connection = await mysql.createConnection(testServer());
  try {
    const [[server]] = await connection.query<mysql.RowDataPacket[]>('SELECT VERSION() AS v');
    const mariadb = /mariadb/i.test(String(server?.v));
    // MySQL has no wsrep_sync_wait: there the single-server setup (nothing added) must run.
    const cluster = mariadb ? 'galera' : 'single';
    for (const [level, expected] of [
      ['session', 1],
      ['strict', 7],
    ] as const) {
      await connection.query(
        sessionSetup({ flavour: mariadb ? 'mariadb' : 'mysql', cluster }, 30_000, level),
      );
      if (mariadb) {
        const [[row]] = await connection.query<mysql.RowDataPacket[]>(
          'SELECT @@SESSION.wsrep_sync_wait AS wait',
        );
        expect(Number(row?.wait)).toBe(expected);
      }
    }
  } finally {
    await connection.end();
  }
});

test('a level that does not exist is a usage error (exit 2)', async () => {
  const child = spawn(
    process.execPath,
    [builtCli(), 'run', ...connectionFlags(db.name), '-o', '0', '--read-consistency', 'causal'],
    { env: { PATH: process.env.PATH, HOME: home } },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code).toBe(2);
  expect(stderr.split('\n')[0]).toBe(
    "tablegate: --read-consistency must be eventual, session or strict, got 'causal'",
  );
});

testIf(galeraAvailable, 'no mariadbd with galera-4 (apt-get install galera-4)')(
  'on a Galera node (a cluster of one) it is detected, and every pool connection waits as set',
  async () => {
    const node = await startGaleraNode();
    try {
      const admin = await rootConnection(node);
      await admin.query('CREATE DATABASE g; CREATE TABLE g.t (id INT AUTO_INCREMENT PRIMARY KEY)');
      await admin.end();
      for (const [level, wait] of [
        ['eventual', '0'],
        ['session', '1'],
        ['strict', '7'],
      ] as const) {
        const db = await openDatabase(
          { ...node, database: 'g', poolSize: 2 },
          { statementTimeoutMs: 30_000, stallTimeoutMs: 30_000, readConsistency: level },
        );
        try {
          expect(db.cluster).toBe('galera');
          const write = await db.run({ sql: 'INSERT INTO t () VALUES ()', params: [] });
          expect(write.affectedRows).toBe(1);
          // Both pool connections: each got the setting when it was made.
          const reads = await Promise.all(
            [1, 2].map(() =>
              db.rows({
                sql: 'SELECT @@SESSION.wsrep_sync_wait AS w, SLEEP(0.1) AS s',
                params: [],
              }),
            ),
          );
          expect(reads.map((rows) => rows[0]?.w)).toEqual([wait, wait]);
        } finally {
          await db.close();
        }
      }
    } finally {
      await node.destroy();
    }
  },
  60_000,
);
