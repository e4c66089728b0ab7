/**
 * Resuming the change feed (docs/changes.md, "Resuming"): from a position older than what the
 * gateway keeps in memory (read again from the binary log), across a gateway killed with SIGKILL
 * and started again (the `eventsource` client reconnects with Last-Event-ID by itself), and a
 * position whose log file was purged (410). Against a private MariaDB with the binary log on,
 * changes written by a plain mysql2 connection.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type mysql from 'mysql2/promise';
import { FeedPositions } from '../../src/changes/positions.js';
import { freePort, type PrivateServer } from '../../src/demo/private-server.js';
import { builtCli, connectionFlags } from '../helpers/cli.js';
import { feedClient, type Received, settle } from '../helpers/feed-client.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { rootConnection, startBinlogServer } from '../helpers/private-servers.js';

const DB = `resume_${randomBytes(4).toString('hex')}`;
const SECRET = 'changes-resume-test-secret-0123456789abcdef';
/** Transactions the in-process gateway keeps in memory: small, so a resume goes to the log. */
const MEMORY = 5;

let server: PrivateServer;
let writer: mysql.Connection;
let gw: TestGateway;

beforeAll(async () => {
  server = await startBinlogServer();
  writer = await rootConnection(server);
  await writer.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await writer.query(`USE ${DB}`);
  await writer.query(
    'CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL, note VARCHAR(40) NULL)',
  );
  await writer.query('CREATE TABLE beats (id INT AUTO_INCREMENT PRIMARY KEY, n INT NOT NULL)');
  gw = await startTestGateway(DB, {
    db: { ...server, database: DB, poolSize: 4 },
    skiptokenSecret: SECRET,
    feedMemoryTransactions: MEMORY,
    logLevel: (process.env.TG_LOG as 'error') ?? 'silent',
  });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await writer?.end();
  await server?.destroy();
});

/** The text an id holds (positions.ts): `[server, file, start, end, index, gtid, before]`. */
const position = (id: string) =>
  Buffer.from(id.split('.')[1] as string, 'base64url').toString('utf8');
const ids = (events: readonly Received[]) => events.map((e) => e.id);
const rows = (events: readonly Received[]) => events.map((e) => [e.event, e.data.row]);

async function insertItems(from: number, count: number, note: string): Promise<void> {
  for (let n = from; n < from + count; n++) {
    await writer.query('INSERT INTO items (n, note) VALUES (?, ?)', [n, note]);
  }
}

describe('resuming from before what memory holds', () => {
  test('every event after the id arrives once, in order, then the live ones with no gap', async () => {
    const url = `${gw.url}/table/items/changes?$filter=${encodeURIComponent("note eq 'catch-up'")}`;
    const reference = feedClient(url);
    await reference.opened();
    await insertItems(0, 1, 'catch-up');
    // A transaction of three rows: a resume from its middle event gets the rest of it.
    await writer.query(
      "BEGIN; INSERT INTO items (n, note) VALUES (1, 'catch-up'), (2, 'catch-up'), (3, 'catch-up'); COMMIT",
    );
    await insertItems(4, 6 * MEMORY, 'catch-up');
    const old = 4 + 6 * MEMORY;
    expect(await reference.until(old)).toHaveLength(old);

    // Resumes while more is written: those come live after the catch-up, none twice.
    const resumed = feedClient(url, { 'Last-Event-ID': (reference.events[0] as Received).id });
    const middle = feedClient(url, { 'Last-Event-ID': (reference.events[2] as Received).id });
    const writing = insertItems(old, 20, 'catch-up');
    await Promise.all([resumed.opened(), middle.opened(), writing]);
    const total = old + 20;
    await reference.until(total);
    await resumed.until(total - 1);
    await middle.until(total - 3);
    await settle();
    for (const client of [reference, resumed, middle]) client.close();

    expect(reference.events.map((e) => (e.data.row as { n: number }).n)).toEqual(
      Array.from({ length: total }, (_, n) => n),
    );
    expect(ids(resumed.events)).toEqual(ids(reference.events.slice(1)));
    expect(rows(resumed.events)).toEqual(rows(reference.events.slice(1)));
    expect(ids(middle.events)).toEqual(ids(reference.events.slice(3)));
    expect(rows(middle.events)).toEqual(rows(reference.events.slice(3)));
  }, 60_000);
});

describe('resuming across a change of columns', () => {
  test('the replay sends the schema event, then the rows after it in the new shape', async () => {
    await writer.query('CREATE TABLE shapes (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL)');
    const url = `${gw.url}/table/shapes/changes`;
    const first = feedClient(url);
    await first.opened();
    await writer.query("INSERT INTO shapes VALUES (1, 'one')");
    await writer.query('ALTER TABLE shapes ADD COLUMN colour VARCHAR(10) NULL');
    await writer.query("INSERT INTO shapes VALUES (2, 'two', 'red')");
    const seen = await first.until(3);
    first.close();
    expect(seen.map((e) => e.event)).toEqual(['insert', 'schema', 'insert']);

    const fromInsert = feedClient(url, { 'Last-Event-ID': (seen[0] as Received).id });
    const fromSchema = feedClient(url, { 'Last-Event-ID': (seen[1] as Received).id });
    await Promise.all([fromInsert.opened(), fromSchema.opened()]);
    await fromInsert.until(2);
    await fromSchema.until(1);
    await settle();
    fromInsert.close();
    fromSchema.close();
    expect(fromInsert.events.map((e) => [e.event, e.id])).toEqual(
      seen.slice(1).map((e) => [e.event, e.id]),
    );
    expect(fromInsert.events[1]?.data.row).toEqual({ id: 2, name: 'two', colour: 'red' });
    expect(fromSchema.events.map((e) => [e.event, e.data.row])).toEqual([
      ['insert', { id: 2, name: 'two', colour: 'red' }],
    ]);
  });
});

/** The built gateway as a process of its own on `port`, resolved once it listens. */
function startGatewayProcess(port: number, home: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        builtCli(),
        'run',
        ...connectionFlags(DB, server),
        '-o',
        String(port),
        '--listen-host',
        '127.0.0.1',
        '--skiptoken-secret',
        SECRET,
        '--change-feed',
        'on',
      ],
      { env: { PATH: process.env.PATH, HOME: home } },
    );
    let stdout = '';
    let stderr = '';
    child.stderr?.on('data', (d) => (stderr += d));
    child.stdout?.on('data', (d) => {
      stdout += d;
      if (stdout.includes('tablegate listening')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`the gateway exited ${code}: ${stderr}`)));
  });
}

function killed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('a gateway killed and started again', () => {
  let home: string;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-resume-'));
  });
  afterAll(async () => {
    if (child !== undefined) await killed(child);
    await rm(home, { recursive: true, force: true });
  });

  test('the EventSource reconnects by itself and gets every change made while it was down', async () => {
    const port = await freePort();
    child = await startGatewayProcess(port, home);
    const client = feedClient(`http://127.0.0.1:${port}/table/beats/changes`);
    await client.opened();
    // Rows written one a transaction without pause, the gateway killed in the middle of them.
    let written = 0;
    let writing = true;
    const writes = (async () => {
      while (writing) {
        await writer.query('INSERT INTO beats (n) VALUES (?)', [written]);
        written += 1;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    await client.until(20);
    await killed(child);
    const atKill = client.events.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Nothing written after the start: the catch-up must end on what the log holds, not wait
    // for a next change.
    writing = false;
    await writes;
    child = await startGatewayProcess(port, home);
    await client.opened(2, 30_000);
    await client.until(written, 30_000);
    await settle();
    client.close();

    expect(atKill).toBeLessThan(written);
    expect(client.events.map((e) => e.event)).toEqual(Array(written).fill('insert'));
    expect(client.events.map((e) => (e.data.row as { n: number }).n)).toEqual(
      Array.from({ length: written }, (_, n) => n),
    );
    expect(new Set(ids(client.events)).size).toBe(written);
  }, 90_000);
});

describe('positions that cannot be resumed from', () => {
  const answer = async (headers: Record<string, string>, query = '') => {
    const controller = new AbortController();
    const response = await fetch(`${gw.url}/table/items/changes${query}`, {
      headers,
      signal: controller.signal,
    });
    const type = response.headers.get('content-type') ?? '';
    const body = type.startsWith('application/json') ? await response.json() : null;
    controller.abort();
    return { status: response.status, body };
  };

  test('an id edited, signed by another deployment or of another version is 400 BAD_FEED_POSITION', async () => {
    const client = feedClient(`${gw.url}/table/items/changes`);
    await client.opened();
    await insertItems(1000, 1, 'bad ids');
    const [event] = await client.until(1);
    client.close();
    const [version, text, mac] = (event as Received).id.split('.') as [string, string, string];
    const place = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    const edited = Buffer.from(
      JSON.stringify([...place.slice(0, 3), (place[3] as number) + 1, ...place.slice(4)]),
    ).toString('base64url');
    const foreign = new FeedPositions('another deployment, another secret 0123456789').seal({
      server: place[0] as string,
      file: place[1] as string,
      start: place[2] as number,
      end: place[3] as number,
      index: place[4] as number,
      gtid: place[5] as string,
      before: place[6] as string,
    });
    const bad = {
      status: 400,
      body: {
        success: false,
        message:
          'The position (Last-Event-ID or $since) is not one this change feed gave: send the id of an event unchanged',
        code: 'BAD_FEED_POSITION',
      },
    };
    expect(await answer({ 'Last-Event-ID': `${version}.${edited}.${mac}` })).toEqual(bad);
    expect(await answer({ 'Last-Event-ID': foreign })).toEqual(bad);
    expect(await answer({}, `?$since=${encodeURIComponent(foreign)}`)).toEqual(bad);
    expect(await answer({ 'Last-Event-ID': `f0.${text}.${mac}` })).toEqual(bad);
    expect(await answer({ 'Last-Event-ID': `${version}.${text}` })).toEqual(bad);
    // The id itself, unchanged, resumes.
    expect((await answer({ 'Last-Event-ID': (event as Received).id })).status).toBe(200);
  });

  // Last: it purges the binary log the other tests read.
  test('a position whose log file was purged is 410 FEED_POSITION_GONE, by Last-Event-ID and $since', async () => {
    const client = feedClient(`${gw.url}/table/items/changes`);
    await client.opened();
    await insertItems(2000, 2 * MEMORY + 1, 'purged');
    const events = await client.until(2 * MEMORY + 1);
    client.close();
    const oldest = (events[0] as Received).id;
    const newest = (events[events.length - 1] as Received).id;
    await writer.query('FLUSH BINARY LOGS');
    const [[status]] = (await writer.query('SHOW MASTER STATUS')) as unknown as [
      { File: string }[],
    ];
    const file = JSON.parse(position(oldest))[1] as string;
    // MariaDB keeps a file until its binlog checkpoint has moved past it, a moment after FLUSH.
    const deadline = Date.now() + 20_000;
    for (;;) {
      await writer.query(`PURGE BINARY LOGS TO '${(status as { File: string }).File}'`);
      const [logs] = (await writer.query('SHOW BINARY LOGS')) as unknown as [
        { Log_name: string }[],
      ];
      if (!logs.some((log) => log.Log_name === file)) break;
      if (Date.now() > deadline) throw new Error(`${file} was not purged`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const gone = {
      status: 410,
      body: {
        success: false,
        message:
          'The binary log no longer holds that position (purged): read the table again, then follow its changes without Last-Event-ID or $since',
        code: 'FEED_POSITION_GONE',
      },
    };
    expect(await answer({ 'Last-Event-ID': oldest })).toEqual(gone);
    expect(await answer({}, `?$since=${encodeURIComponent(oldest)}`)).toEqual(gone);
    // A position memory still holds resumes from there, though its file is gone from the log.
    expect(await answer({ 'Last-Event-ID': newest })).toEqual({ status: 200, body: null });
  });
});
