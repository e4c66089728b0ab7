#!/usr/bin/env node
/**
 * Scenario (n): the change feed (docs/changes.md) under 1,000 subscribers, beside its floor.
 *
 *   npm run build && node bench/changes.mjs      (also part of `npm run bench`, BENCH_SCENARIOS=n)
 *
 * A private MariaDB with the binary log on (src/demo/private-server.ts, as the tests start
 * it); a writer process committing 1,000 single-row changes a second; client processes holding
 * the streams and timing each event from the writer's clock just before the commit to its
 * arrival. Three runs in turn, each with its own writer and clients:
 *
 * 1. the floor (bench/feed-floor.mjs): the binary-log library alone, every row event written
 *    unfiltered to every socket;
 * 2. tablegate in auth mode: half the subscribers anonymous (every row), half signed in as one
 *    of 50 users under the row condition `owner eq @user.email`;
 * 3. the same gateway, the streams closed, the same 1,000 clients polling `updated_at gt …`
 *    once a second each instead: what each way costs MySQL (SHOW GLOBAL STATUS deltas, the
 *    writer's and this script's own statements taken out).
 *
 * Prints a Markdown section (stdout when run alone). Settings (bench/README.md):
 * BENCH_FEED_SUBSCRIBERS, BENCH_FEED_RATE, BENCH_FEED_SECONDS, BENCH_FEED_POLL_SECONDS,
 * BENCH_FEED_USERS, BENCH_FEED_CLIENT_PROCESSES, BENCH_FEED_PROFILE, BENCH_TABLEGATE_CLI,
 * BENCH_KEEP_TMP. No assertions: the exit code is 0 whenever the run completed.
 */
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import mysql from 'mysql2/promise';
import { cpuSeconds, machineTicks, PeakWatch, stolenPercent } from './lib/proc.mjs';
import { startChild, stopAll, stopChild, tail } from './lib/processes.mjs';
import { CLI, cleanEnv, freePort, launch, REPO } from './lib/servers.mjs';

const env = process.env;
const settings = {
  subscribers: Number(env.BENCH_FEED_SUBSCRIBERS ?? 1000),
  rate: Number(env.BENCH_FEED_RATE ?? 1000),
  seconds: Number(env.BENCH_FEED_SECONDS ?? 20),
  pollSeconds: Number(env.BENCH_FEED_POLL_SECONDS ?? 10),
  /** After the last commit, how long the clients may still take their events. */
  drainSeconds: Number(env.BENCH_FEED_DRAIN_SECONDS ?? 10),
  users: Number(env.BENCH_FEED_USERS ?? 50),
  clientProcesses: Number(env.BENCH_FEED_CLIENT_PROCESSES ?? 2),
  writerConnections: 4,
  /** Loopback source addresses the clients spread over (127.0.0.10 and up). */
  addresses: 20,
  profile: env.BENCH_FEED_PROFILE === '1',
};
const DATABASE = 'feed_bench';
const TABLE = 'events';
const CLIENTS = path.join(REPO, 'bench', 'lib', 'feed-clients.mjs');
const WRITER = path.join(REPO, 'bench', 'lib', 'feed-writer.mjs');
const FEED_FLOOR = path.join(REPO, 'bench', 'feed-floor.mjs');
/** What the gateway logs when its decisions fall too far behind the binary log. */
const CLOSED_ALL = 'decisions fell too far behind the binary log';
/** The policy of the gateway run: anonymous reads every row, a user only its own. */
const POLICY = {
  roles: {
    anonymous: { tables: { [TABLE]: { read: true } } },
    user: { tables: { [TABLE]: { read: { where: 'owner eq @user.email' } } } },
  },
};

const log = (text) => process.stderr.write(`${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const email = (owner) => `user${owner}@bench.example`;
const address = (i) => `127.0.0.${10 + (i % settings.addresses)}`;

/** A child process on the IPC channel: `ask(message, replyType)` resolves to its reply. */
function ipcChild(script, tmp, name) {
  const child = startChild(process.execPath, [script], {
    cwd: tmp,
    env: cleanEnv(),
    logFile: path.join(tmp, `${name}.log`),
    ipc: true,
  });
  const waiting = new Map();
  child.on('message', (message) => {
    const resolve = waiting.get(message.type);
    waiting.delete(message.type);
    resolve?.(message);
  });
  const ask = (message, replyType) =>
    new Promise((resolve, reject) => {
      waiting.set(replyType, resolve);
      child.send(message);
      child.exited.then(({ code, signal }) =>
        reject(
          new Error(`${name} exited (${signal ?? code}): ${tail(path.join(tmp, `${name}.log`))}`),
        ),
      );
    });
  return { child, ask };
}

async function setUpDatabase(admin) {
  await admin.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
  await admin.query(`CREATE DATABASE ${DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.query(`CREATE TABLE ${DATABASE}.${TABLE} (
      id INT AUTO_INCREMENT PRIMARY KEY,
      owner VARCHAR(60) NOT NULL,
      seq INT NOT NULL,
      sent_us BIGINT NOT NULL,
      updated_at DATETIME(6) NOT NULL,
      body VARCHAR(100) NOT NULL,
      KEY by_time (updated_at),
      KEY by_owner (owner, updated_at))`);
  // One row per owner, which the writer's updates change (before any stream opens: no event).
  const seedIds = [];
  for (let owner = 0; owner < settings.users; owner++) {
    const [result] = await admin.query(
      `INSERT INTO ${DATABASE}.${TABLE} (owner, seq, sent_us, updated_at, body) VALUES (?, -1, 0, UTC_TIMESTAMP(6), 'seed')`,
      [email(owner)],
    );
    seedIds.push(result.insertId);
  }
  return seedIds;
}

/** The private server's process id (its command line names its port), or null. */
function serverPid(port) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (/mysqld|mariadbd/.test(command) && command.includes(`--port=${port}\0`))
        return Number(entry);
    } catch {}
  }
  return null;
}

/** Questions and Com_select so far, and this connection's own Questions. */
async function serverCounters(admin) {
  const [rows] = await admin.query(
    "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Com_select')",
  );
  const [[own]] = await admin.query("SHOW SESSION STATUS LIKE 'Questions'");
  const value = (name) => Number(rows.find((r) => r.Variable_name === name)?.Value ?? 0);
  return { questions: value('Questions'), selects: value('Com_select'), own: Number(own.Value) };
}

/** What the server under test asked MySQL between two readings: the writer's and ours out. */
function serverQueries(before, after, writerQuestions, seconds) {
  const questions = after.questions - before.questions - writerQuestions - (after.own - before.own);
  // Our two readings' SHOW statements are not selects; the writer sends none.
  return {
    questionsPerSecond: questions / seconds,
    selectsPerSecond: (after.selects - before.selects) / seconds,
  };
}

function postJson(base, route, body, from) {
  return new Promise((resolve, reject) => {
    const url = new URL(route, base);
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        const parts = [];
        response.on('data', (chunk) => parts.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode, body: Buffer.concat(parts).toString() }),
        );
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

/** Registers and logs in the users, each from an address of its own; their tokens. */
async function signIn(base) {
  const tokens = [];
  for (let owner = 0; owner < settings.users; owner++) {
    const credentials = { email: email(owner), password: `bench password ${owner}` };
    const from = address(owner);
    const registered = await postJson(base, '/auth/register', credentials, from);
    if (registered.status !== 200)
      throw new Error(`register: ${registered.status} ${registered.body}`);
    const login = await postJson(base, '/auth/login', credentials, from);
    const token = login.status === 200 ? JSON.parse(login.body).token : undefined;
    if (typeof token !== 'string') throw new Error(`login: ${login.status} ${login.body}`);
    tokens.push(token);
  }
  return tokens;
}

/** Subscriber (or poller) i: even ones anonymous, odd ones signed in as user (i >> 1) mod users. */
function clientSpecs(count, tokens, pathOf) {
  return Array.from({ length: count }, (_, i) => {
    const owner = i % 2 === 1 && tokens !== null ? (i >> 1) % settings.users : -1;
    return {
      owner,
      token: owner >= 0 ? tokens[owner] : null,
      address: address(i),
      path: pathOf,
    };
  });
}

function expectedEvents(specs, total) {
  let sum = 0;
  for (const { owner } of specs) {
    if (owner < 0) sum += total;
    else sum += Math.floor(total / settings.users) + (owner < total % settings.users ? 1 : 0);
  }
  return sum;
}

const split = (list, parts) =>
  Array.from({ length: parts }, (_, p) => list.filter((_, i) => i % parts === p));

function mergeHistograms(list) {
  const counts = new Map();
  let maxUs = 0;
  let bucketUs = 100;
  for (const h of list) {
    bucketUs = h.bucketUs;
    maxUs = Math.max(maxUs, h.maxUs);
    for (const [bucket, count] of h.pairs) counts.set(bucket, (counts.get(bucket) ?? 0) + count);
  }
  const sorted = [...counts].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((s, [, c]) => s + c, 0);
  const percentile = (p) => {
    if (total === 0) return null;
    const rank = Math.ceil((p / 100) * total);
    let seen = 0;
    for (const [bucket, count] of sorted) {
      seen += count;
      // The bucket's upper edge: never flatters.
      if (seen >= rank) return ((bucket + 1) * bucketUs) / 1000;
    }
    return maxUs / 1000;
  };
  return { count: total, p50: percentile(50), p99: percentile(99), max: maxUs / 1000 };
}

/**
 * One streaming run against `server`: the streams opened, the writer's schedule written, the
 * events waited for (until every expected one came, or none came for 5 s), then each client's
 * tally, the server's CPU and memory, and MySQL's counters over the run.
 */
async function streamRun({ name, server, specs, admin, db, mysqlPid, tmp, seedIds }) {
  const clients = split(specs, settings.clientProcesses).map((part, p) => ({
    part,
    ...ipcChild(CLIENTS, tmp, `${name}-clients-${p}`),
  }));
  const base = new URL(server.base);
  const plan = { capacity: Math.round(settings.rate * settings.seconds), users: settings.users };
  log(`  ${name}: opening ${specs.length} streams…`);
  const ready = await Promise.all(
    clients.map(({ ask, part }) =>
      ask(
        {
          type: 'stream',
          base: { host: base.hostname, port: Number(base.port) },
          clients: part,
          plan,
        },
        'ready',
      ),
    ),
  );
  const opened = ready.reduce((s, r) => s + r.opened, 0);
  if (opened < specs.length) {
    const statuses = ready.flatMap((r) => r.statuses).filter((s) => s !== 200);
    log(
      `  ${name}: only ${opened} of ${specs.length} streams opened (statuses ${[...new Set(statuses)]})`,
    );
  }
  await sleep(500);
  const writer = ipcChild(WRITER, tmp, `${name}-writer`);
  const watch = new PeakWatch(server.pid).start();
  const cpuBefore = cpuSeconds(server.pid);
  const mysqlBefore = cpuSeconds(mysqlPid);
  const countersBefore = await serverCounters(admin);
  const started = performance.now();
  log(`  ${name}: writing ${plan.capacity} changes over ${settings.seconds} s…`);
  const written = await writer.ask(
    {
      type: 'write',
      db,
      rate: settings.rate,
      seconds: settings.seconds,
      users: settings.users,
      seedIds,
      connections: settings.writerConnections,
      firstSeq: 0,
    },
    'written',
  );
  const expected = expectedEvents(specs, written.total);
  let distinct = 0;
  const drainFrom = performance.now();
  let lastProgress = drainFrom;
  for (;;) {
    const progress = await Promise.all(
      clients.map(({ ask }) => ask({ type: 'progress' }, 'progress')),
    );
    const now = progress.reduce((s, p) => s + p.distinct, 0);
    if (now > distinct) lastProgress = performance.now();
    distinct = now;
    const waited = performance.now() - drainFrom;
    if (distinct >= expected || performance.now() - lastProgress > 5000) break;
    if (waited > settings.drainSeconds * 1000) break;
    await sleep(200);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  const mysqlCpu = cpuSeconds(mysqlPid) - mysqlBefore;
  const countersAfter = await serverCounters(admin);
  const memory = watch.stop();
  // The hub's own bound (src/changes/hub.ts): past it every stream ends with `overflow`, which
  // a client still behind on its backlog may not have read by the end.
  const closedAll = readFileSync(server.logFile, 'utf8').includes(CLOSED_ALL);
  const results = await Promise.all(
    clients.map(({ ask }) => ask({ type: 'finish', total: written.total }, 'result')),
  );
  for (const { child } of clients) await stopChild(child);
  await stopChild(writer.child);
  const sum = (field) => results.reduce((s, r) => s + r[field], 0);
  const latency = mergeHistograms(results.map((r) => r.histogram));
  log(
    `  ${name}: p50 ${latency.p50} ms, p99 ${latency.p99} ms, ${sum('distinct')} of ${sum('expected')} events, CPU ${cpu.toFixed(1)} s`,
  );
  const endings = {};
  for (const r of results)
    for (const [why, n] of Object.entries(r.endings)) endings[why] = (endings[why] ?? 0) + n;
  return {
    name,
    opened,
    written,
    seconds,
    cpu,
    memory,
    latency,
    closedAll,
    mysqlCpu,
    expected: sum('expected'),
    distinct: sum('distinct'),
    missed: sum('missed'),
    streamsMissing: sum('streamsMissing'),
    duplicates: sum('duplicates'),
    unexpected: sum('unexpected'),
    unreadable: sum('unreadable'),
    endings,
    queries: serverQueries(countersBefore, countersAfter, written.questions, seconds),
  };
}

/** The same clients polling once a second each while the writer writes, on the gateway. */
async function pollRun({ server, specs, admin, db, mysqlPid, tmp, seedIds }) {
  const parts = split(specs, settings.clientProcesses);
  const clients = parts.map((part, p) => ({
    part,
    ...ipcChild(CLIENTS, tmp, `poll-clients-${p}`),
  }));
  const base = new URL(server.base);
  const writer = ipcChild(WRITER, tmp, 'poll-writer');
  const cpuBefore = cpuSeconds(server.pid);
  const mysqlBefore = cpuSeconds(mysqlPid);
  const countersBefore = await serverCounters(admin);
  const started = performance.now();
  log(`  polling: ${specs.length} clients once a second for ${settings.pollSeconds} s…`);
  const [written, ...polled] = await Promise.all([
    writer.ask(
      {
        type: 'write',
        db,
        rate: settings.rate,
        seconds: settings.pollSeconds,
        users: settings.users,
        seedIds,
        connections: settings.writerConnections,
        firstSeq: 0,
      },
      'written',
    ),
    ...clients.map(({ ask, part }) =>
      ask(
        {
          type: 'poll',
          base: { host: base.hostname, port: Number(base.port) },
          clients: part,
          seconds: settings.pollSeconds,
          table: TABLE,
        },
        'polled',
      ),
    ),
  ]);
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(server.pid) - cpuBefore;
  const mysqlCpu = cpuSeconds(mysqlPid) - mysqlBefore;
  const countersAfter = await serverCounters(admin);
  for (const { child } of clients) await stopChild(child);
  await stopChild(writer.child);
  const sum = (field) => polled.reduce((s, r) => s + r[field], 0);
  return {
    written,
    seconds,
    cpu,
    mysqlCpu,
    requests: sum('requests'),
    non2xx: sum('non2xx'),
    errors: sum('errors'),
    rows: sum('rows'),
    firstBad: polled.find((p) => p.firstBad)?.firstBad ?? null,
    latency: mergeHistograms(polled.map((r) => r.histogram)),
    queries: serverQueries(countersBefore, countersAfter, written.questions, seconds),
  };
}

async function startFloor(db, tmp) {
  const port = await freePort();
  return launch(
    'feed-floor',
    process.execPath,
    [FEED_FLOOR],
    {
      cwd: tmp,
      env: cleanEnv({
        FLOOR_PORT: String(port),
        FLOOR_HOST: '127.0.0.1',
        FLOOR_DB_HOST: db.host,
        FLOOR_DB_PORT: String(db.port),
        FLOOR_DB_USER: db.user,
        FLOOR_DB_PASSWORD: db.password,
        FLOOR_DB_NAME: DATABASE,
      }),
      tmp,
      port,
    },
    '/health',
  );
}

async function startGateway(db, tmp) {
  const port = await freePort();
  const policy = path.join(tmp, 'feed-policy.json');
  writeFileSync(policy, JSON.stringify(POLICY));
  const profileDir = path.join(tmp, 'profile');
  const args = [
    ...(settings.profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
    CLI,
    'run',
    'auth',
    '-h',
    db.host,
    '-u',
    db.user,
    '-P',
    String(db.port),
    '-D',
    DATABASE,
    '-o',
    String(port),
    '--listen-host',
    '127.0.0.1',
    '--log-level',
    'warn',
    '--pool-size',
    '10',
    '--policy',
    policy,
    '--change-feed',
    'on',
    // 1,000 streams and then 1,000 keep-alive pollers, over the default of 900.
    '--max-connections',
    String(Math.max(900, settings.subscribers * 2 + 100)),
  ];
  const server = await launch(
    'tablegate',
    process.execPath,
    args,
    {
      cwd: tmp,
      env: cleanEnv({
        TABLEGATE_DB_PASSWORD: db.password,
        TABLEGATE_JWT_SECRET: randomBytes(32).toString('base64url'),
        // One client address holds many requests at once here, as a load test does; stated
        // outright so that a different default would not change the bench.
        TABLEGATE_MAX_CLIENT_REQUESTS: '0',
      }),
      tmp,
      port,
    },
    '/health',
  );
  return { ...server, profileDir };
}

const ms = (value) => (value === null || value === undefined ? '—' : value.toFixed(1));
const int = (value) => Math.round(value).toLocaleString('en');
const mibOf = (bytes) => (bytes ? (bytes / 1024 / 1024).toFixed(0) : '—');
const ratio = (a, b) => (a !== null && b !== null && b > 0 ? (a / b).toFixed(2) : '—');

function endingsText(endings) {
  const list = Object.entries(endings).map(([why, n]) => `${n} ${why}`);
  return list.length > 0 ? list.join(', ') : 'none';
}

function report({ floor, gateway, polling, conditions }) {
  const row = (label, f) => `| ${label} | ${f(gateway)} | ${f(floor)} |`;
  const eventsPerSecond = (r) => r.distinct / r.seconds;
  const gatewayPollQ = polling?.queries.questionsPerSecond ?? null;
  const feedQ = gateway.queries.questionsPerSecond;
  const p99Ratio = gateway.latency.p99 / floor.latency.p99;
  // A loaded machine answers fewer polls than were asked for: per answer, and scaled to all.
  const perPoll =
    polling !== null && polling.requests > 0
      ? (gatewayPollQ * polling.seconds) / polling.requests
      : null;
  const pollingLines = () => [
    `**Polling instead** (the same gateway and writer, ${settings.subscribers.toLocaleString('en')} clients each reading \`$filter=updated_at gt <newest seen>\` once a second for ${settings.pollSeconds} s, keep-alive, half signed in):`,
    '',
    '|  | feed (1 stream each) | polling (1 read a second each) | polling ÷ feed |',
    '| --- | ---: | ---: | ---: |',
    `| MySQL statements of the gateway per s (Questions) | ${feedQ.toFixed(0)} | ${gatewayPollQ.toFixed(0)} | ${ratio(gatewayPollQ, feedQ)} |`,
    `| of them SELECTs per s (Com_select) | ${gateway.queries.selectsPerSecond.toFixed(0)} | ${polling.queries.selectsPerSecond.toFixed(0)} | ${ratio(polling.queries.selectsPerSecond, gateway.queries.selectsPerSecond)} |`,
    `| MySQL server CPU s per s (the writer's work included) | ${(gateway.mysqlCpu / gateway.seconds).toFixed(2)} | ${(polling.mysqlCpu / polling.seconds).toFixed(2)} | ${ratio(polling.mysqlCpu / polling.seconds, gateway.mysqlCpu / gateway.seconds)} |`,
    `| gateway CPU s per s | ${(gateway.cpu / gateway.seconds).toFixed(2)} | ${(polling.cpu / polling.seconds).toFixed(2)} | ${ratio(polling.cpu / polling.seconds, gateway.cpu / gateway.seconds)} |`,
    `| requests answered per s (non-2xx, errors) | — | ${(polling.requests / polling.seconds).toFixed(0)} (${polling.non2xx}, ${polling.errors}) | |`,
    `| MySQL statements per poll answered; × ${settings.subscribers.toLocaleString('en')} polls a second | — | ${perPoll === null ? '— (none answered)' : `${perPoll.toFixed(2)}; ${(perPoll * settings.subscribers).toFixed(0)}`} | ${perPoll === null ? '—' : ratio(perPoll * settings.subscribers, feedQ)} |`,
    `| a poll's answer p50 / p99 ms; rows per poll | — | ${ms(polling.latency.p50)} / ${ms(polling.latency.p99)}; ${(polling.rows / Math.max(1, polling.requests)).toFixed(0)} | |`,
    `| changes committed per s meanwhile | ${int(gateway.written.rate)} | ${int(polling.written.rate)} | |`,
    ...(polling.firstBad ? ['', `First failed poll: \`${polling.firstBad}\``] : []),
    '',
  ];
  const lines = [
    `### Scenario (n): the change feed, ${settings.subscribers.toLocaleString('en')} subscribers, ${settings.rate.toLocaleString('en')} changes a second`,
    '',
    `- ${conditions}`,
    `- ${settings.seconds} s of writing per run (${settings.writerConnections} writer connections, single-row autocommit changes, 4 inserts to 1 update); subscribers in ${settings.clientProcesses} client processes over ${settings.addresses} loopback addresses; tablegate: half anonymous (every row), half signed in as one of ${settings.users} users under \`owner eq @user.email\`; the floor sends every row to every socket`,
    '',
    '|  | tablegate (auth, policy) | floor (zongji → sockets) |',
    '| --- | ---: | ---: |',
    row('streams open', (r) => int(r.opened)),
    row(
      'changes committed (per s; writer behind its schedule at most, ms)',
      (r) => `${int(r.written.committed)} (${int(r.written.rate)}; ${int(r.written.behindMs)})`,
    ),
    row(
      'writer commit p50 / p99 ms',
      (r) => `${ms(r.written.commitP50)} / ${ms(r.written.commitP99)}`,
    ),
    row('**commit-to-delivery p50 ms**', (r) => ms(r.latency.p50)),
    row('**commit-to-delivery p99 ms**', (r) => ms(r.latency.p99)),
    row('commit-to-delivery max ms', (r) => ms(r.latency.max)),
    row('events expected / delivered', (r) => `${int(r.expected)} / ${int(r.distinct)}`),
    row('events delivered per s', (r) => int(eventsPerSecond(r))),
    row('**events missed** (streams missing any)', (r) => `${int(r.missed)} (${r.streamsMissing})`),
    row('duplicates', (r) => int(r.duplicates)),
    row("events of another user's rows", (r) => int(r.unexpected)),
    row('streams that ended (as the clients saw it)', (r) => endingsText(r.endings)),
    row('the server closed every stream, too far behind', (r) => (r.closedAll ? '**yes**' : 'no')),
    row(
      'server CPU s (run: writing + draining, s)',
      (r) => `${r.cpu.toFixed(1)} (${r.seconds.toFixed(1)})`,
    ),
    row('server CPU µs per event delivered', (r) => ((r.cpu / r.distinct) * 1e6).toFixed(1)),
    row(
      'server RSS with the streams open → peak MiB',
      (r) => `${mibOf(r.memory.idle)} → ${mibOf(r.memory.peak)}`,
    ),
    row('MySQL statements of the server per s (Questions)', (r) =>
      r.queries.questionsPerSecond.toFixed(0),
    ),
    row('of them SELECTs per s (Com_select)', (r) => r.queries.selectsPerSecond.toFixed(0)),
    row('MySQL server CPU s (all of it: writer, binary log, the server)', (r) =>
      r.mysqlCpu === null ? '—' : r.mysqlCpu.toFixed(1),
    ),
    '',
    ...(polling === null ? [] : pollingLines()),
    'Targets (judged here, not asserted):',
    '',
    `- p99 ≤ 100 ms: tablegate ${ms(gateway.latency.p99)} ms — ${gateway.latency.p99 <= 100 ? 'met' : '**missed**'}`,
    `- p99 ≤ 1.5 × the floor's: ${ms(gateway.latency.p99)} ÷ ${ms(floor.latency.p99)} = ${p99Ratio.toFixed(2)} — ${p99Ratio <= 1.5 ? 'met' : '**missed**'}`,
    ...(floor.missed > 0
      ? [
          '  (the floor itself fell behind on this machine: its p99 is the age of its backlog, so this ratio says nothing; compare CPU per event)',
        ]
      : []),
    `- events missed 0: tablegate ${int(gateway.missed)}, floor ${int(floor.missed)} — ${gateway.missed === 0 ? 'met' : '**missed**'}`,
    '',
  ];
  return lines.join('\n');
}

/** The whole scenario; returns its Markdown section. Stops everything it started. */
export async function runFeedBench() {
  // The private server's code is TypeScript: the built copy (npm run build).
  const { binlogArgs, startPrivateServer } = await import(
    pathToFileURL(path.join(path.dirname(CLI), 'demo', 'private-server.js')).href
  );
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'tablegate-feed-bench-'));
  const loadAtStart = os.loadavg()[0];
  const ticksAtStart = machineTicks();
  const started = Date.now();
  let mariadb = null;
  let admin = null;
  try {
    log('scenario n: starting a private MariaDB with the binary log on…');
    mariadb = await startPrivateServer(undefined, binlogArgs());
    const db = {
      host: mariadb.host,
      port: mariadb.port,
      user: mariadb.user,
      password: mariadb.password,
      database: DATABASE,
    };
    admin = await mysql.createConnection({ ...db, database: undefined });
    const mysqlPid = serverPid(mariadb.port);
    const seedIds = await setUpDatabase(admin);

    log('scenario n: the floor');
    const floorServer = await startFloor(db, tmp);
    const floor = await streamRun({
      name: 'floor',
      server: floorServer,
      specs: clientSpecs(settings.subscribers, null, '/changes'),
      admin,
      db,
      mysqlPid,
      tmp,
      seedIds,
    });
    await stopChild(floorServer.child);

    log('scenario n: tablegate');
    const gatewayServer = await startGateway(db, tmp);
    const tokens = await signIn(gatewayServer.base);
    const specs = clientSpecs(settings.subscribers, tokens, `/table/${TABLE}/changes`);
    const gateway = await streamRun({
      name: 'tablegate',
      server: gatewayServer,
      specs,
      admin,
      db,
      mysqlPid,
      tmp,
      seedIds,
    });
    await sleep(1000);
    const polling =
      settings.pollSeconds > 0
        ? await pollRun({ server: gatewayServer, specs, admin, db, mysqlPid, tmp, seedIds })
        : null;
    // A profile is written on the way out, which 1,000 streams' buffers can hold up.
    await stopChild(gatewayServer.child, 'SIGINT', settings.profile ? 30_000 : 5000);
    let profile = '';
    if (settings.profile) {
      const file = existsSync(gatewayServer.profileDir)
        ? readdirSync(gatewayServer.profileDir).find((f) => f.endsWith('.cpuprofile'))
        : undefined;
      if (!file) log('scenario n: the gateway wrote no profile');
      if (file) {
        const kept = path.join(os.tmpdir(), 'tablegate-feed-gateway.cpuprofile');
        copyFileSync(path.join(gatewayServer.profileDir, file), kept);
        profile = `\nThe gateway's CPU profile of the whole run: ${kept} (\`node bench/summarize-profile.mjs ${kept}\`).\n`;
        log(`scenario n: profile at ${kept}`);
      }
    }
    const [version] = (await admin.query('SELECT VERSION() AS v'))[0];
    const conditions = `${os.availableParallelism()} cores, Node ${process.version}, MariaDB ${version.v} (private, binary log on, ROW, FULL); whole scenario ${((Date.now() - started) / 1000).toFixed(0)} s; 1-minute load average ${loadAtStart.toFixed(2)} at the start, ${os.loadavg()[0].toFixed(2)} at the end; CPU stolen by the hypervisor ${stolenPercent(ticksAtStart, machineTicks()).toFixed(1)} %`;
    return report({ floor, gateway, polling, conditions }) + profile;
  } finally {
    await stopAll().catch(() => {});
    await admin?.end().catch(() => {});
    await mariadb?.destroy().catch(() => {});
    if (!env.BENCH_KEEP_TMP) rmSync(tmp, { recursive: true, force: true, maxRetries: 2 });
    else log(`scenario n: logs kept in ${tmp}`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      log(`\n${signal}: stopping`);
      stopAll().finally(() => process.exit(130));
    });
  }
  try {
    process.stdout.write(await runFeedBench());
    process.exit(0);
  } catch (error) {
    log(`feed bench failed: ${error.stack ?? error}`);
    process.exit(1);
  }
}
