#!/usr/bin/env node
/**
 * Scenario (p), OData (docs/odata.md): the gateway in a process of its own with its default
 * settings, against a database of an `items` table (10,000 rows) and BENCH_ODATA_TABLES (1,000)
 * other tables of 10 columns. Two targets, measured side by side:
 *
 * - `GET /odata/items?$filter=id eq <n>` answers at least 0.95× the requests per second of the
 *   same REST read `GET /table/items/read?$filter=id eq <n>` (rounds interleaved, 16
 *   connections, BENCH_ROUNDS × BENCH_SECONDS each);
 * - five requests at once for `$metadata` while it is built again (a table was created) hold a
 *   one-row REST read up by at most 50 ms over its usual time; the first OData read after the
 *   change, which waits for the role's model, is printed too.
 *
 *   npm run build && node bench/odata.mjs
 *
 * Exit code 1 when a target is missed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { adminConfig, connectAdmin } from './lib/database.mjs';
import { closeAgent, LoadTally, runLoad, timedGet } from './lib/load.mjs';
import { startGatewayProcess, stopAll, stopChild } from './lib/processes.mjs';
import { median } from './lib/report.mjs';
import { CLI } from './lib/servers.mjs';

const env = process.env;
const DATABASE = 'tablegate_bench_odata';
const TABLES = Number(env.BENCH_ODATA_TABLES ?? 1000);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(env.BENCH_SECONDS ?? 5);
const ROWS = 10_000;
const RATIO_TARGET = 0.95;
const DELAY_BOUND_MS = 50;
const log = (text) => process.stderr.write(`${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function createTables(admin) {
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  await admin.query(`USE ${DATABASE}`);
  await admin.query(`CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL,
    price DECIMAL(10,2) NOT NULL, qty INT NULL, created DATETIME NOT NULL)`);
  await admin.query(
    `INSERT INTO items SELECT seq, CONCAT('item ', seq), seq % 1000 / 10, seq % 7,
      '2024-01-01 00:00:00' + INTERVAL seq MINUTE FROM seq_1_to_${ROWS}`,
  );
  // MyISAM: a thousand InnoDB tables take half a minute to create, these about a second.
  for (let i = 0; i < TABLES; i++) {
    await admin.query(`CREATE TABLE t${String(i).padStart(4, '0')} (id INT PRIMARY KEY,
      name VARCHAR(40) NOT NULL, price DECIMAL(10,2) NOT NULL, qty INT NULL, created DATETIME NULL,
      note TEXT NULL, status ENUM('new','paid','sent') NULL, flag TINYINT NULL, big BIGINT NULL,
      day DATE NULL) ENGINE=MyISAM`);
  }
}

const pointRead = (prefix) => () => ({
  method: 'GET',
  path: `${prefix}?$filter=id%20eq%20${1 + Math.floor(Math.random() * ROWS)}`,
});

const metadataAgent = new http.Agent({ keepAlive: true });

async function metadata(base) {
  const { status } = await timedGet(base, '/odata/$metadata', { via: metadataAgent });
  if (status !== 200) throw new Error(`$metadata: ${status}`);
}

async function oneRow(base, url) {
  const answer = await timedGet(base, url);
  if (answer.status !== 200) throw new Error(`${url}: ${answer.status}`);
  return answer.ms;
}

const REST_ONE = '/table/items/read?$filter=id%20eq%201';
const ODATA_ONE = '/odata/items?$filter=id%20eq%201';

async function delayDuringBuild(admin, base, round) {
  const alone = [];
  for (let i = 0; i < 20; i++) alone.push(await oneRow(base, REST_ONE));
  await admin.query(`CREATE TABLE t_new_${round} (id INT PRIMARY KEY) ENGINE=MyISAM`);
  // The schema cache re-reads at most once a second.
  await sleep(1100);
  await oneRow(base, REST_ONE);
  let done = false;
  const started = performance.now();
  const builds = Promise.all(Array.from({ length: 5 }, () => metadata(base))).finally(() => {
    done = true;
  });
  const during = [];
  while (!done) {
    during.push(await oneRow(base, REST_ONE));
    await sleep(5);
  }
  await builds;
  const built = performance.now() - started;
  // The first OData read of a new schema version waits for the role's model (made above).
  await admin.query(`CREATE TABLE t_next_${round} (id INT PRIMARY KEY) ENGINE=MyISAM`);
  await sleep(1100);
  await oneRow(base, REST_ONE);
  const firstOData = await oneRow(base, ODATA_ONE);
  return { delay: Math.max(...during) - median(alone), reads: during.length, built, firstOData };
}

const admin = await connectAdmin(adminConfig());
const home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-odata-'));
let failed = false;
let gateway;
try {
  log(`creating items (${ROWS} rows) and ${TABLES} tables in ${DATABASE}`);
  await createTables(admin);
  gateway = await startGatewayProcess(env.BENCH_TABLEGATE_CLI ?? CLI, {
    admin: adminConfig(),
    database: DATABASE,
    home,
  });
  const { url } = gateway;
  const rest = new LoadTally();
  const odata = new LoadTally();
  const kinds = [
    ['REST', pointRead('/table/items/read'), rest],
    ['OData', pointRead('/odata/items'), odata],
  ];
  for (const [, next] of kinds)
    await runLoad({ base: url, connections: 16, seconds: 2, next, tally: null });
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so neither always has the warmer machine.
    const order = round % 2 === 0 ? kinds : [...kinds].reverse();
    for (const [name, next, tally] of order) {
      log(`round ${round + 1}: ${name}`);
      await runLoad({ base: url, connections: 16, seconds: SECONDS, next, tally });
    }
  }
  rest.requireClean('REST');
  odata.requireClean('OData');
  const ratio = odata.rps / rest.rps;
  if (ratio < RATIO_TARGET) failed = true;
  console.log('\n### Scenario (p): OData beside REST, one row by $filter\n');
  console.log('| read | requests/s | p50 ms | p99 ms |');
  console.log('|---|---:|---:|---:|');
  for (const [name, , tally] of kinds) {
    console.log(
      `| ${name} | ${tally.rps.toFixed(0)} | ${tally.percentile(50)?.toFixed(2)} | ${tally.percentile(99)?.toFixed(2)} |`,
    );
  }
  console.log(
    `\nOData / REST: ${ratio.toFixed(3)} (≥ ${RATIO_TARGET})${ratio < RATIO_TARGET ? ' ✗' : ''}`,
  );
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++)
    rounds.push(await delayDuringBuild(admin, url, round));
  const delay = median(rounds.map((r) => r.delay));
  if (delay > DELAY_BOUND_MS) failed = true;
  console.log(
    `\n$metadata of ${TABLES + 1} tables, 5 requests at once while it is built again: a one-row REST read held up by ${delay.toFixed(1)} ms, median of ${ROUNDS} (≤ ${DELAY_BOUND_MS})${delay > DELAY_BOUND_MS ? ' ✗' : ''}; builds took ${rounds.map((r) => r.built.toFixed(0)).join(', ')} ms with ${rounds.map((r) => r.reads).join(', ')} reads meanwhile; the first OData read of a new schema version took ${rounds.map((r) => r.firstOData.toFixed(0)).join(', ')} ms`,
  );
} catch (error) {
  failed = true;
  log(String(error?.stack ?? error));
} finally {
  if (gateway) await stopChild(gateway.child);
  await stopAll();
  closeAgent();
  metadataAgent.destroy();
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
  await admin.end();
  await rm(home, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
