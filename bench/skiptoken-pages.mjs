#!/usr/bin/env node
/**
 * Scenario (k): paging through a big table with `$skiptoken` (docs/paging.md).
 * On a table of 2,000,000 rows (BENCH_PAGING_ROWS), page 20,000 of 100 rows
 * (BENCH_PAGING_PAGE) by the token of the page before must cost at most 1.5 × page 1; the same
 * page by `$skip` is timed beside it. Two orders: the primary key, and a DATETIME column with an
 * index, descending (the primary key breaks its ties). Each page is checked: the token's page
 * holds exactly the rows of the `$skip` page. Then, in this process, what one continued read
 * costs the read pipeline, its compiled read found in the cache with a new token every time,
 * against compiling it afresh; and what sealing a token costs.
 *
 *   npm run build && node bench/skiptoken-pages.mjs
 *
 * The table is built once with INSERT … SELECT over MariaDB's seq_1_to_N (about a minute) into
 * the database tablegate_bench_paging, and reused by the next run while it holds the same rows;
 * BENCH_PAGING_DROP=1 drops it at the end. Settings: BENCH_ROUNDS (timed requests of each kind,
 * 31, after 12 unmeasured; the `$skip` page 3), BENCH_TABLEGATE_CLI, BENCH_DB_* (bench/README.md). Exit code 1 when a
 * check or the 1.5 × bound fails.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { adminConfig, connectAdmin } from './lib/database.mjs';
import { closeAgent, timedGet } from './lib/load.mjs';
import { startGatewayProcess, stopAll, stopChild } from './lib/processes.mjs';
import { median } from './lib/report.mjs';
import { CLI } from './lib/servers.mjs';

const env = process.env;
const DATABASE = 'tablegate_bench_paging';
const ROWS = Number(env.BENCH_PAGING_ROWS ?? 2_000_000);
const PAGE_SIZE = 100;
const PAGE = Number(env.BENCH_PAGING_PAGE ?? 20_000);
const ROUNDS = Number(env.BENCH_ROUNDS ?? 31);
/** Requests of each kind before the timed ones: more than the pool's 10 connections. */
const WARMUP = 12;
const SKIP_ROUNDS = 3;
const BOUND = 1.5;
const cli = env.BENCH_TABLEGATE_CLI ?? CLI;
const log = (text) => process.stderr.write(`${text}\n`);

if (PAGE * PAGE_SIZE > ROWS) throw new Error(`page ${PAGE} of ${PAGE_SIZE} is past ${ROWS} rows`);

async function prepareTable(admin) {
  await admin.query(`CREATE DATABASE IF NOT EXISTS ${DATABASE}`);
  await admin.query(`USE ${DATABASE}`);
  const [existing] = await admin.query(
    "SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'events'",
    [DATABASE],
  );
  if (existing.length > 0) {
    const [[{ n }]] = await admin.query('SELECT COUNT(*) AS n FROM events');
    if (Number(n) === ROWS) return 'reused';
  }
  await admin.query('DROP TABLE IF EXISTS events');
  await admin.query(`CREATE TABLE events (
      id INT PRIMARY KEY,
      created_at DATETIME(6) NOT NULL,
      kind VARCHAR(16) NOT NULL,
      amount DECIMAL(12,2) NOT NULL,
      note VARCHAR(64) NULL,
      KEY events_created_at (created_at)
    ) ENGINE=InnoDB`);
  const started = performance.now();
  // In slices, so no single statement holds a huge transaction; seq_1_to_N is MariaDB's.
  const slice = 250_000;
  for (let from = 0; from < ROWS; from += slice) {
    const count = Math.min(slice, ROWS - from);
    // Timestamps repeat (every 7th second has several rows): the primary key breaks the ties.
    await admin.query(`INSERT INTO events
      SELECT ${from} + seq,
             TIMESTAMP'2020-01-01 00:00:00' + INTERVAL (${from} + seq) DIV 3 SECOND,
             ELT(1 + (${from} + seq) % 4, 'view', 'click', 'buy', 'leave'),
             ((${from} + seq) * 7919 % 100000) / 100,
             IF((${from} + seq) % 5 = 0, NULL, CONCAT('note ', ${from} + seq))
        FROM seq_1_to_${count}`);
    log(`  ${from + count} rows`);
  }
  await admin.query('ANALYZE TABLE events');
  return `built in ${((performance.now() - started) / 1000).toFixed(0)} s`;
}

async function get(base, url) {
  const answer = await timedGet(base, url, { keepBody: true });
  if (answer.status !== 200) throw new Error(`${url}: ${answer.status} ${answer.text}`);
  return answer;
}

/** The next link of a page, fetched as a header (timedGet keeps no headers). */
async function nextLink(base, url) {
  const response = await fetch(base + url);
  await response.arrayBuffer();
  const link = response.headers.get('link');
  const target = link && /^<([^>]*)>; rel="next"$/.exec(link)?.[1];
  if (!target) throw new Error(`${url}: no Link`);
  return target;
}

async function timed(base, url, rounds) {
  const times = [];
  let text;
  for (let i = 0; i < rounds; i++) {
    const answer = await get(base, url);
    times.push(answer.ms);
    text = answer.text;
  }
  return { ms: median(times), text };
}

/**
 * Page 1 and the token's page, timed in turns (so the machine's drift falls on both alike),
 * after each was read WARMUP times: every pool connection has prepared both statements.
 */
async function measureOrder(base, orderby) {
  const first = `/table/events/read?$orderby=${encodeURIComponent(orderby)}&$top=${PAGE_SIZE}`;
  // The token of page PAGE is the Link of page PAGE - 1 (read once by $skip to get it).
  const tokenUrl = await nextLink(base, `${first}&$skip=${(PAGE - 2) * PAGE_SIZE}`);
  const page1 = [];
  const byToken = [];
  let tokenText;
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    const one = await get(base, first);
    const other = await get(base, tokenUrl);
    if (i < WARMUP) continue;
    page1.push(one.ms);
    byToken.push(other.ms);
    tokenText = other.text;
  }
  const bySkip = await timed(base, `${first}&$skip=${(PAGE - 1) * PAGE_SIZE}`, SKIP_ROUNDS);
  const same = tokenText === bySkip.text && JSON.parse(tokenText).length === PAGE_SIZE;
  return { orderby, page1: median(page1), byToken: median(byToken), bySkip: bySkip.ms, same };
}

/** In this process: what the read pipeline and the token cost one continued read. */
async function pipelineCosts() {
  const at = (file) => pathToFileURL(path.resolve('dist', file)).href;
  const [{ ReadPipeline, compileRead, continueAt }, { Skiptokens, bindingOf }, { ITEMS_TABLE }] =
    await Promise.all([
      import(at('pipeline/read.js')),
      import(at('pipeline/skiptoken.js')),
      import('./lib/items-table.mjs'),
    ]);
  const table = { ...ITEMS_TABLE, relations: new Map() };
  const tokens = new Skiptokens('bench-secret-bench-secret-bench-secret');
  const schema = { plan: (t, plan) => ({ table: t, plan: plan(t) }) };
  const pipeline = new ReadPipeline(schema, 'mariadb', tokens);
  const base = { $filter: "category eq 'books'", $orderby: 'created_at desc', $top: '50' };
  const signature = compileRead(table, { ...base, $skiptoken: '' }, null).page.signature;
  const binding = bindingOf(table.name, base, signature);
  const N = 20_000;
  const made = Array.from({ length: N }, (_, i) =>
    tokens.seal(binding, {
      skip: 0,
      after: [`2024-01-01 00:00:${String(i % 60).padStart(2, '0')}`, String(i)],
    }),
  );
  const url = (token) =>
    `/table/items/read?$filter=category%20eq%20'books'&$orderby=created_at%20desc&$top=50&$skiptoken=${token}`;
  const cpu = (run) => {
    for (let i = 0; i < 2000; i++) run(i);
    const best = [];
    for (let r = 0; r < 5; r++) {
      const start = process.cpuUsage();
      for (let i = 0; i < N; i++) run(i);
      const used = process.cpuUsage(start);
      best.push(((used.user + used.system) * 1000) / N);
    }
    return Math.min(...best);
  };
  return {
    cached: cpu((i) => pipeline.read(table, url(made[i]), { ...base, $skiptoken: made[i] }, null)),
    uncached: cpu((i) =>
      continueAt(
        compileRead(table, { ...base, $skiptoken: made[i] }, null),
        tokens.open(binding, made[i]),
      ),
    ),
    firstPage: cpu(() => pipeline.read(table, url('x').replace(/&\$skiptoken=x$/, ''), base, null)),
    seal: cpu((i) => tokens.seal(binding, { skip: 0, after: ['2024-01-01 00:00:00', String(i)] })),
    sealKept: cpu(() =>
      tokens.seal(binding, { skip: 0, after: ['2024-01-01 00:00:00', '1'] }, true),
    ),
    open: cpu((i) => tokens.open(binding, made[i])),
  };
}

const admin = await connectAdmin(adminConfig());
const home = await mkdtemp(path.join(os.tmpdir(), 'tablegate-paging-'));
let failed = false;
try {
  log(`table: ${ROWS} rows in ${DATABASE}.events`);
  log(`  ${await prepareTable(admin)}`);
  const { child, url } = await startGatewayProcess(cli, {
    admin: adminConfig(),
    database: DATABASE,
    home,
  });
  const results = [];
  for (const orderby of ['id', 'created_at desc']) {
    log(`timing $orderby=${orderby}`);
    results.push(await measureOrder(url, orderby));
  }
  await stopChild(child);
  log('timing the read pipeline in this process');
  const costs = await pipelineCosts();

  console.log(
    `\n### (k) page ${PAGE.toLocaleString('en')} of ${PAGE_SIZE} rows in ${ROWS.toLocaleString('en')} rows\n`,
  );
  const nth = PAGE.toLocaleString('en');
  console.log(
    `| $orderby | page 1 ms | page ${nth} by $skiptoken ms | ratio (≤ ${BOUND}) | page ${nth} by $skip ms | same rows |`,
  );
  console.log('|---|---:|---:|---:|---:|---|');
  for (const r of results) {
    const ratio = r.byToken / r.page1;
    if (ratio > BOUND || !r.same) failed = true;
    console.log(
      `| ${r.orderby} | ${r.page1.toFixed(1)} | ${r.byToken.toFixed(1)} | ${ratio.toFixed(2)}${ratio > BOUND ? ' ✗' : ''} | ${r.bySkip.toFixed(0)} | ${r.same ? 'yes' : 'NO'} |`,
    );
  }
  console.log(
    `\nmedians of ${ROUNDS} requests one after another, page 1 and the token's page in turns (the $skip page: ${SKIP_ROUNDS})\n`,
  );
  console.log('| in the gateway process, per request | CPU µs |');
  console.log('|---|---:|');
  console.log(
    `| continued read, compiled read from the cache, token opened and bound | ${(costs.cached / 1000).toFixed(1)} |`,
  );
  console.log(`| the same compiled afresh (no cache) | ${(costs.uncached / 1000).toFixed(1)} |`);
  console.log(`| first page (no token), from the cache | ${(costs.firstPage / 1000).toFixed(1)} |`);
  console.log(
    `| sealing one token (the Link of a full page) | ${(costs.seal / 1000).toFixed(1)} |`,
  );
  console.log(
    `| the Link of a page read again without a token (kept sealed) | ${(costs.sealKept / 1000).toFixed(1)} |`,
  );
  console.log(`| opening one token | ${(costs.open / 1000).toFixed(1)} |`);
} catch (error) {
  failed = true;
  log(String(error?.stack ?? error));
} finally {
  await stopAll();
  closeAgent();
  if (env.BENCH_PAGING_DROP === '1') await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
  await admin.end();
  await rm(home, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
