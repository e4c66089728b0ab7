#!/usr/bin/env node
/**
 * Scenario (r), OData (docs/odata.md): the gateway in a process of its own with its default
 * settings, against a database of an `items` table (10,000 rows) and BENCH_ODATA_TABLES (1,000)
 * other tables of 10 columns. Two targets, measured side by side:
 *
 * - `GET /odata/items?$filter=id eq <n>` answers at least 0.95× the requests per second of the
 *   same REST read `GET /table/items/read?$filter=id eq <n>` (rounds interleaved, 16
 *   connections, BENCH_ROUNDS × BENCH_SECONDS each);
 * - `$metadata` of those 1,001 tables holds no one-row REST read (READERS readers side by side)
 *   more than 50 ms over its usual time: five requests at once per format for the XML, the JSON,
 *   and both forms, each first after a schema change (the schema re-read, the role's model and
 *   the document built), then the same for the unchanged schema (kept); the p99 and the max wait
 *   and the time to the first answer (the build) of each, over BENCH_ROUNDS rounds. The first
 *   OData read of a new schema version, which waits for the role's model, is printed too.
 *   Beside the waits, what the gateway saw from inside (bench/lib/loop-gaps.mjs): its longest
 *   gap between two turns of the event loop, and the most CPU its main thread spent in one.
 *
 * BENCH_ODATA_PARTS: `reads`, `metadata` or both (the default). BENCH_ODATA_BEFORE_CLI: another
 * build's dist/cli.js, run as a second gateway ("before") beside this one ("after"), the
 * `$metadata` rounds alternated between the two. BENCH_ODATA_PROFILE=<dir>: each gateway under
 * `node --cpu-prof` into <dir>/<name> (bench/profile-gaps.mjs lists the profile's longest stretches).
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
/** `reads` (OData beside REST), `metadata` (reads while `$metadata` is served), or both. */
const PARTS = (env.BENCH_ODATA_PARTS ?? 'reads,metadata').split(',');
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

/** One `$metadata` request in `format` (its body read as sent and dropped); resolves its time. */
async function metadata(base, format) {
  const path = format === 'json' ? '/odata/$metadata?$format=json' : '/odata/$metadata';
  const { status, ms } = await timedGet(base, path, { via: metadataAgent });
  if (status !== 200) throw new Error(`${path}: ${status}`);
  return ms;
}

async function oneRow(base, url, via) {
  const answer = await timedGet(base, url, via ? { via } : {});
  if (answer.status !== 200) throw new Error(`${url}: ${answer.status}`);
  return answer.ms;
}

const REST_ONE = '/table/items/read?$filter=id%20eq%201';
const ODATA_ONE = '/odata/items?$filter=id%20eq%201';
/** Readers timing one-row reads side by side, each on a keep-alive socket of its own. */
const READERS = 4;
const readerAgents = Array.from(
  { length: READERS },
  () => new http.Agent({ keepAlive: true, maxSockets: 1 }),
);

/** The p-th percentile (nearest rank) of `values`. */
function percentile(values, p) {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * The waits (ms over the usual time) of one-row reads by READERS readers while `work()` runs,
 * with the time `work` took. The usual time is the readers' median just before.
 */
async function waitsDuring(base, work, gaps = async () => null) {
  const alone = [];
  for (let i = 0; i < 10; i++) {
    alone.push(...(await Promise.all(readerAgents.map((via) => oneRow(base, REST_ONE, via)))));
  }
  const usual = median(alone);
  await gaps();
  let done = false;
  const started = performance.now();
  const working = work().finally(() => {
    done = true;
  });
  const during = [];
  await Promise.all(
    readerAgents.map(async (via) => {
      while (!done) {
        during.push((await oneRow(base, REST_ONE, via)) - usual);
        await sleep(2);
      }
    }),
  );
  const result = await working;
  return { waits: during, ms: performance.now() - started, result, inside: await gaps() };
}

/** A schema change the gateway will have seen by the next request that checks for one. */
async function changeSchema(admin, name) {
  await admin.query(`CREATE TABLE ${name} (id INT PRIMARY KEY) ENGINE=MyISAM`);
  // The schema cache re-reads at most once a second.
  await sleep(1100);
}

/** Five requests at once per format: resolves when the last is answered, with the first's time. */
const requests = (base, formats) => async () => {
  const times = await Promise.all(
    formats.flatMap((format) => Array.from({ length: 5 }, () => metadata(base, format))),
  );
  return Math.min(...times);
};

/**
 * The `$metadata` cases: the first requests after a schema change (the schema re-read, the
 * role's model and the document built), in XML, in JSON and in both at once, and the same
 * requests again for the unchanged schema (served from the cache).
 */
const METADATA_CASES = [
  { label: 'XML, first after a schema change', formats: ['xml'], change: true },
  { label: 'JSON, first after a schema change', formats: ['json'], change: true },
  { label: 'XML and JSON at once, first after a change', formats: ['xml', 'json'], change: true },
  { label: 'XML and JSON, schema unchanged (kept)', formats: ['xml', 'json'], change: false },
];

/**
 * What bench/lib/loop-gaps.mjs saw inside `child` since it was last asked (null when the
 * gateway was started without it).
 */
function loopGaps(child) {
  if (!child.connected) return Promise.resolve(null);
  return new Promise((resolve) => {
    const answer = (message) => {
      if (message?.loopGaps === undefined) return;
      child.off('message', answer);
      resolve(message.loopGaps);
    };
    child.on('message', answer);
    child.send('loop-gaps');
  });
}

/**
 * Each case over ROUNDS rounds, on every gateway in turn (the order swapped each round, so that
 * neither always has the warmer machine); each gateway's rows as METADATA_CASES lists them.
 */
async function metadataWaits(admin, gateways) {
  const rows = new Map(gateways.map(({ name }) => [name, []]));
  let tables = 0;
  for (const { label, formats, change } of METADATA_CASES) {
    const measured = new Map(
      gateways.map(({ name }) => [name, { label, waits: [], firsts: [], inside: [] }]),
    );
    // Kept means built already: the other gateway may not have seen the last change yet.
    if (!change) for (const { url } of gateways) await requests(url, formats)();
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? gateways : [...gateways].reverse();
      for (const { name, url, child } of order) {
        if (change) await changeSchema(admin, `t_new_${tables++}`);
        const run = await waitsDuring(url, requests(url, formats), () => loopGaps(child));
        const row = measured.get(name);
        row.waits.push(...run.waits);
        row.firsts.push(run.result);
        if (run.inside !== null) row.inside.push(run.inside);
      }
    }
    for (const [name, row] of measured) rows.get(name).push(row);
  }
  // The first OData read of a new schema version waits for the role's model.
  const firstReads = new Map(gateways.map(({ name }) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const { name, url } of gateways) {
      const table = `t_new_${tables++}`;
      await changeSchema(admin, table);
      // A REST read of the new table re-reads the schema (it names a table not known yet).
      await oneRow(url, `/table/${table}/read`);
      firstReads.get(name).push(await oneRow(url, ODATA_ONE));
    }
  }
  return { rows, firstReads };
}

/** `values` (ms) as their maximum and median, `max (median)`. */
const maxMedian = (values) =>
  values.length === 0 ? '–' : `${Math.max(...values).toFixed(1)} (${median(values).toFixed(1)})`;

/** The table of one gateway's `$metadata` cases; whether every case met the bound. */
function printMetadata(name, rows, firstReads) {
  let met = true;
  console.log(
    `\n### $metadata of ${TABLES + 1} tables${name === '' ? '' : `, ${name}`}: one-row reads meanwhile (${READERS} readers)\n`,
  );
  console.log(
    `| requests (5 per format, ${ROUNDS} rounds) | first answer ms | reads | wait p99 ms | wait max ms (≤ ${DELAY_BOUND_MS}) | in gateway: longest gap ms, max (median) | its CPU ms | most CPU between two turns ms, max (median) | turns > 10 ms CPU | full GCs, longest ms |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const { label, waits, firsts, inside } of rows) {
    const max = Math.max(...waits);
    if (max > DELAY_BOUND_MS) met = false;
    const longest = inside.reduce((a, b) => (b.wallMs > (a?.wallMs ?? -1) ? b : a), null);
    console.log(
      `| ${label} | ${firsts.map((ms) => ms.toFixed(0)).join(', ')} | ${waits.length} | ${percentile(waits, 99).toFixed(1)} | ${max.toFixed(1)}${max > DELAY_BOUND_MS ? ' ✗' : ''} | ${maxMedian(inside.map((g) => g.wallMs))} | ${longest === null ? '–' : longest.wallCpuMs.toFixed(1)} | ${maxMedian(inside.map((g) => g.cpuMs))} | ${inside.map((g) => g.over10).join(', ')} | ${inside.map((g) => g.fullGcs).join(', ')}; ${inside.length === 0 ? '–' : Math.max(...inside.map((g) => g.fullGcMs)).toFixed(1)} |`,
    );
  }
  console.log(
    `\nThe first OData read of a new schema version (it waits for the role's model): ${firstReads.map((ms) => ms.toFixed(0)).join(', ')} ms.`,
  );
  return met;
}

/** The OData read beside the same REST read; whether it met its target. */
async function readsBesideRest(url) {
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
  console.log('\n### Scenario (r): OData beside REST, one row by $filter\n');
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
  return ratio >= RATIO_TARGET;
}

/**
 * The node flags of a measured gateway: bench/lib/loop-gaps.mjs always (the in-process gaps),
 * `--cpu-prof` into BENCH_ODATA_PROFILE/<name> when that is set.
 */
function nodeArgs(name) {
  const args = ['--import', new URL('./lib/loop-gaps.mjs', import.meta.url).href];
  if (env.BENCH_ODATA_PROFILE) {
    args.push(
      '--cpu-prof',
      '--cpu-prof-dir',
      path.join(env.BENCH_ODATA_PROFILE, name || 'gateway'),
    );
  }
  return args;
}

const admin = await connectAdmin(adminConfig());
const home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-odata-'));
let failed = false;
const gateways = [];
try {
  log(`creating items (${ROWS} rows) and ${TABLES} tables in ${DATABASE}`);
  await createTables(admin);
  // BENCH_ODATA_BEFORE_CLI: a second gateway (another build) measured beside the first.
  const clis = [['', env.BENCH_TABLEGATE_CLI ?? CLI]];
  if (env.BENCH_ODATA_BEFORE_CLI)
    clis.splice(0, 1, ['before', env.BENCH_ODATA_BEFORE_CLI], ['after', clis[0][1]]);
  for (const [name, cli] of clis) {
    const started = await startGatewayProcess(cli, {
      admin: adminConfig(),
      database: DATABASE,
      home,
      nodeArgs: nodeArgs(name),
      ipc: true,
    });
    gateways.push({ name, ...started });
  }
  if (PARTS.includes('reads') && !(await readsBesideRest(gateways[0].url))) failed = true;
  if (PARTS.includes('metadata')) {
    const load = os.loadavg();
    const { rows, firstReads } = await metadataWaits(admin, gateways);
    for (const { name } of gateways) {
      if (!printMetadata(name, rows.get(name), firstReads.get(name))) failed = true;
    }
    const after = os.loadavg();
    console.log(
      `\nLoad average (1, 5, 15 min) at the start: ${load.map((v) => v.toFixed(1)).join(', ')}; at the end: ${after.map((v) => v.toFixed(1)).join(', ')} (${os.cpus().length} CPUs).`,
    );
  }
} catch (error) {
  failed = true;
  log(String(error?.stack ?? error));
} finally {
  for (const { child } of gateways) await stopChild(child);
  await stopAll();
  closeAgent();
  metadataAgent.destroy();
  for (const via of readerAgents) via.destroy();
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
  await admin.end();
  await rm(home, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
