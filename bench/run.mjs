#!/usr/bin/env node
/**
 * `npm run bench`: builds the bench database, starts tablegate, the floor server, xmysql and
 * mysql-rest side by side on it, runs every scenario against each (load scenarios round-robin
 * over the servers, several short rounds), checks one answer of each, and prints one Markdown
 * table with ratios to the floor. Progress goes to stderr, the report to stdout.
 * Settings: BENCH_SECONDS, BENCH_ROUNDS, BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS,
 * BENCH_BIG_REQUESTS, BENCH_UPLOAD_MIB, BENCH_SCENARIOS (e.g. "a,b"), BENCH_SERVERS, BENCH_DB_*,
 * BENCH_TABLEGATE_CLI, BENCH_KEEP_TMP (see bench/README.md). Scenarios (n), the change feed, and
 * (o), webhooks, need a database of their own (a private MariaDB with the binary log on):
 * bench/changes.mjs and bench/webhooks.mjs run them after the others and their sections follow
 * the table; `BENCH_SCENARIOS=n,o` runs them alone.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCacheBench } from './cache.mjs';
import { runFeedBench } from './changes.mjs';
import {
  adminConfig,
  connectAdmin,
  createBenchDatabase,
  createBenchUser,
  dropBenchUser,
  serverVersion,
} from './lib/database.mjs';
import { collectionsSince, logOffset, TRACE_GC } from './lib/gc.mjs';
import { closeAgent, LoadTally, runLoad, timedGet, uploadFile } from './lib/load.mjs';
import { cpuSeconds, machineTicks, PeakWatch, stolenPercent, waitForQuiet } from './lib/proc.mjs';
import { stopAll, stopChild } from './lib/processes.mjs';
import { resultTable, targetLines } from './lib/report.mjs';
import { DIALECTS, SCENARIOS, seededRandom } from './lib/scenarios.mjs';
import { CLI, installTool, REPO, SERVERS } from './lib/servers.mjs';
import { runWebhookBench } from './webhooks.mjs';

const env = process.env;
const settings = {
  seconds: Number(env.BENCH_SECONDS ?? 3),
  rounds: Number(env.BENCH_ROUNDS ?? 3),
  // 3 s, not 1: a fresh server's CPU per request is still ~5-10 % above its steady level in its
  // second and third second (V8 compiling on background threads, counted in its CPU time), and
  // more so for a server with more code to compile (bench/README.md, sixth pass).
  warmupSeconds: Number(env.BENCH_WARMUP_SECONDS ?? 3),
  connections: Number(env.BENCH_CONNECTIONS ?? 32),
  poolSize: 10,
  bigRequests: Number(env.BENCH_BIG_REQUESTS ?? 3),
  uploadBytes: Number(env.BENCH_UPLOAD_MIB ?? 1024) * 1024 * 1024,
  scenarios: env.BENCH_SCENARIOS?.split(',').map((s) => s.trim()),
  servers: env.BENCH_SERVERS?.split(',').map((s) => s.trim()),
  traceGc: env.BENCH_TRACE_GC !== '0',
};

const log = (text) => process.stderr.write(`${text}\n`);

function shell(command, args) {
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return '';
  }
}

/** Warns when a source file is newer than the build the bench is about to measure. */
function checkBuild() {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  }
  const built = statSync(CLI).mtimeMs;
  const newer = shell('find', [
    path.join(REPO, 'src'),
    '-newermt',
    `@${Math.floor(built / 1000)}`,
    '-type',
    'f',
  ]);
  if (newer) log(`warning: src/ has files newer than dist/ (run \`npm run build\`):\n${newer}`);
}

/** The servers a scenario runs on: those it names, else every server not in auth mode. */
function serversOf(scenario, running) {
  return running.filter((server) =>
    scenario.servers ? scenario.servers.includes(server.key) : !server.authMode,
  );
}

const rotate = (list, by) => list.map((_, i) => list[(i + by) % list.length]);

function result(scenario, server, fields) {
  return {
    scenario: scenario.id,
    server: server.key,
    rps: null,
    idle: null,
    peak: null,
    ...fields,
  };
}

/** Check each server once, warm each up, then rounds × servers of load, peak RSS per server. */
async function loadScenario(scenario, running, index) {
  const out = [];
  const active = [];
  for (const server of serversOf(scenario, running)) {
    const dialect = server.dialect ?? DIALECTS[server.key];
    const check = await scenario.check(dialect, server.base, admin).catch((error) => ({
      ok: false,
      reason: `request failed: ${error.message}${error.cause ? ` (${error.cause.message ?? error.cause})` : ''}`,
    }));
    if (check.ok) active.push({ server, dialect, tally: new LoadTally() });
    else if (check.notAvailable)
      out.push(
        result(scenario, server, { state: 'not available yet', reason: 'endpoint answers 404' }),
      );
    else
      out.push(
        result(scenario, server, { state: 'FAIL', reason: `wrong answer: ${check.reason}` }),
      );
  }
  const next = (dialect, seed) => {
    const random = seededRandom(seed);
    return () => scenario.request(dialect, random);
  };
  for (const a of active) {
    log(`  ${scenario.id}: warm-up ${a.server.key}`);
    await runLoad({
      base: a.server.base,
      connections: scenario.connections ?? settings.connections,
      seconds: settings.warmupSeconds,
      next: next(a.dialect, 999),
      tally: null,
    });
  }
  for (const a of active) a.watch = new PeakWatch(a.server.pid).start();
  for (let round = 0; round < settings.rounds; round++) {
    for (const a of rotate(active, round)) {
      const waited = await waitForQuiet();
      log(
        `  ${scenario.id}: round ${round + 1}/${settings.rounds} ${a.server.key}` +
          ` (after ${(waited / 1000).toFixed(1)} s for a quiet machine)`,
      );
      const cpuBefore = cpuSeconds(a.server.pid);
      const logAt = a.server.tracesGc ? logOffset(a.server.logFile) : null;
      await runLoad({
        base: a.server.base,
        connections: scenario.connections ?? settings.connections,
        seconds: settings.seconds,
        amount: scenario.requestsPerRound,
        next: next(a.dialect, 1000 * (index + 1) + round),
        tally: a.tally,
      });
      a.tally.cpu += cpuSeconds(a.server.pid) - cpuBefore;
      if (logAt !== null) {
        a.promoted = (a.promoted ?? 0) + collectionsSince(a.server.logFile, logAt).promoted;
      }
    }
  }
  for (const { server, tally, watch, promoted } of active) {
    const memory = watch.stop();
    const errors = tally.non2xx + tally.errors;
    out.push(
      result(scenario, server, {
        state: errors === 0 ? 'ok' : 'FAIL',
        reason:
          errors === 0
            ? ''
            : `${tally.non2xx} non-2xx (first: ${tally.firstBadStatus ?? '—'}), ${tally.errors} socket errors`,
        rps: tally.rps,
        p50: tally.percentile(50),
        p99: tally.percentile(99),
        errors,
        cpu: tally.responses ? tally.cpu / tally.responses : null,
        promoted: promoted !== undefined && tally.responses ? promoted / tally.responses : null,
        ...memory,
        note: `${tally.responses.toLocaleString('en')} requests`,
      }),
    );
  }
  return out;
}

/** Sequential whole reads: a checked one first, then rounds × servers of timed ones. */
async function bigScenario(scenario, running) {
  const out = [];
  const active = [];
  for (const server of serversOf(scenario, running)) {
    const dialect = DIALECTS[server.key];
    const unsupported = scenario.unsupported(dialect);
    if (unsupported) {
      out.push(result(scenario, server, { state: 'n/a', reason: unsupported }));
      continue;
    }
    const watch = new PeakWatch(server.pid, 20).start();
    const request = scenario.request(dialect);
    const first = await timedGet(server.base, request.path, { keepBody: true }).catch((error) => ({
      status: 0,
      text: error.message,
    }));
    if (first.status !== 200) {
      watch.stop();
      out.push(
        result(
          scenario,
          server,
          first.status === 404
            ? { state: 'not available yet', reason: 'endpoint answers 404' }
            : { state: 'FAIL', reason: `status ${first.status}: ${first.text.slice(0, 120)}` },
        ),
      );
      continue;
    }
    const check = await scenario.checkBody(dialect, first.text, admin);
    if (!check.ok) {
      watch.stop();
      out.push(
        result(scenario, server, { state: 'FAIL', reason: `wrong answer: ${check.reason}` }),
      );
      continue;
    }
    active.push({
      server,
      path: request.path,
      watch,
      times: [],
      bytes: first.bytes,
      errors: 0,
      cpu: 0,
    });
  }
  for (let round = 0; round < settings.bigRequests; round++) {
    for (const a of rotate(active, round)) {
      log(`  ${scenario.id}: request ${round + 1}/${settings.bigRequests} ${a.server.key}`);
      const cpuBefore = cpuSeconds(a.server.pid);
      const answer = await timedGet(a.server.base, a.path).catch(() => ({ status: 0 }));
      a.cpu += cpuSeconds(a.server.pid) - cpuBefore;
      if (answer.status === 200 && answer.bytes === a.bytes) a.times.push(answer.ms);
      else a.errors++;
    }
  }
  for (const a of active) {
    const memory = a.watch.stop();
    const times = [...a.times].sort((x, y) => x - y);
    const total = times.reduce((s, t) => s + t, 0);
    out.push(
      result(scenario, a.server, {
        state: a.errors === 0 ? 'ok' : 'FAIL',
        reason: a.errors === 0 ? '' : `${a.errors} failed or short answers`,
        rps: times.length ? (1000 * times.length) / total : null,
        p50: times.length ? times[Math.floor((times.length - 1) / 2)] : null,
        p99: times.at(-1) ?? null,
        errors: a.errors,
        cpu: settings.bigRequests ? a.cpu / settings.bigRequests : null,
        ...memory,
        note: `${times.length} sequential requests, ${(a.bytes / 1e6).toFixed(1)} MB each; p50/p99 = median/slowest`,
      }),
    );
  }
  return out;
}

/** One upload per server, one server at a time; the stored file is checked, then removed. */
async function uploadScenario(scenario, running) {
  const out = [];
  for (const server of serversOf(scenario, running)) {
    const dialect = DIALECTS[server.key];
    log(`  ${scenario.id}: ${server.key}`);
    const watch = new PeakWatch(server.pid, 20).start();
    const cpuBefore = cpuSeconds(server.pid);
    const answer = await uploadFile(server.base, dialect.upload.path, {
      field: dialect.upload.field,
      size: settings.uploadBytes,
    }).catch((error) => ({ status: 0, text: error.message }));
    const memory = watch.stop();
    const cpu = cpuSeconds(server.pid) - cpuBefore;
    if (answer.status === 404) {
      out.push(
        result(scenario, server, { state: 'not available yet', reason: 'endpoint answers 404' }),
      );
      continue;
    }
    if (answer.status !== 200) {
      out.push(
        result(scenario, server, {
          state: 'FAIL',
          reason: `status ${answer.status}: ${answer.text.slice(0, 120)}`,
          ...memory,
        }),
      );
      continue;
    }
    const expectedSize = settings.uploadBytes + (dialect.rawUpload ? answer.framing : 0);
    let stored;
    let reason = '';
    try {
      stored = dialect.stored(answer.text);
      const inside =
        stored.path && path.resolve(stored.path).startsWith(server.filesDir + path.sep);
      if (!inside) reason = `stored path ${stored.path} is not in ${server.filesDir}`;
      else if (statSync(stored.path).size !== expectedSize)
        reason = `stored ${statSync(stored.path).size} bytes`;
      else if (stored.size !== undefined && stored.size !== expectedSize)
        reason = `answer says ${stored.size} bytes`;
    } catch (error) {
      reason = `cannot check the stored file: ${error.message}`;
    }
    rmSync(server.filesDir, { recursive: true, force: true, maxRetries: 2 });
    mkdirSync(server.filesDir, { recursive: true });
    const mbps = settings.uploadBytes / 1e6 / (answer.ms / 1000);
    out.push(
      result(scenario, server, {
        state: reason ? 'FAIL' : 'ok',
        reason,
        rps: 1000 / answer.ms,
        p50: answer.ms,
        p99: answer.ms,
        errors: reason ? 1 : 0,
        cpu,
        ...memory,
        note: `${settings.uploadBytes / 1024 / 1024} MiB in ${(answer.ms / 1000).toFixed(1)} s, ${mbps.toFixed(0)} MB/s`,
      }),
    );
  }
  return out;
}

/** Each scenario's floor: `floor`, or the one the scenario names (h: the floor with a token check). */
function floorOf(scenarios) {
  return new Map(scenarios.map((s) => [s.id, s.floor ?? 'floor']));
}

let admin = null;
let tmp = null;
let cleaned = null;

function cleanup() {
  cleaned ??= (async () => {
    closeAgent();
    await stopAll().catch(() => {});
    if (admin) {
      await dropBenchUser(admin).catch((error) =>
        log(`could not drop the bench user: ${error.message}`),
      );
      await admin.end().catch(() => {});
    }
    if (tmp && !env.BENCH_KEEP_TMP) rmSync(tmp, { recursive: true, force: true, maxRetries: 2 });
  })();
  return cleaned;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    log(`\n${signal}: stopping servers and cleaning up`);
    cleanup().finally(() => process.exit(130));
  });
}

/** Scenario (n) is wanted: every scenario, or it is named. */
const feedWanted = !settings.scenarios || settings.scenarios.includes('n');
/** Scenario (o), the webhooks: the same. */
const webhooksWanted = !settings.scenarios || settings.scenarios.includes('o');
/** Scenarios (p) and (q), the server cache (bench/cache.mjs): the same. */
const cacheWanted =
  !settings.scenarios || settings.scenarios.includes('p') || settings.scenarios.includes('q');
/** Scenario (r), OData beside the same REST read (bench/odata.mjs, a process of its own). */
const odataWanted = !settings.scenarios || settings.scenarios.includes('r');

/** bench/odata.mjs's report: it makes its own database on :3306 and prints Markdown. */
function runODataBench() {
  const script = path.join(REPO, 'bench', 'odata.mjs');
  try {
    return execFileSync(process.execPath, [script], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (error) {
    // A target missed exits 1 with its report printed.
    return `${error.stdout ?? ''}\n(bench/odata.mjs exited ${error.status})\n`;
  }
}

/** The scenarios of a database of their own (most on a private MariaDB with the binary log), in order. */
async function binlogScenarios() {
  let text = '';
  if (feedWanted) {
    log('scenario n: the change feed (bench/changes.mjs)');
    text += `\n${await runFeedBench()}`;
  }
  if (webhooksWanted) {
    log('scenario o: webhooks (bench/webhooks.mjs)');
    text += `\n${await runWebhookBench()}`;
  }
  if (cacheWanted) {
    log('scenarios p, q: the server cache (bench/cache.mjs)');
    text += `\n${await runCacheBench()}`;
  }
  if (odataWanted) {
    log('scenario r: OData beside REST (bench/odata.mjs)');
    text += `\n${runODataBench()}`;
  }
  return text;
}

async function main() {
  checkBuild();
  if (settings.scenarios?.every((id) => ['n', 'o', 'p', 'q', 'r'].includes(id))) {
    process.stdout.write(`## Bench run ${shell('date', [])}\n${await binlogScenarios()}`);
    return 0;
  }
  const started = Date.now();
  const loadAtStart = os.loadavg()[0];
  const ticksAtStart = machineTicks();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'tablegate-bench-'));
  const dbAdmin = adminConfig();
  admin = await connectAdmin(dbAdmin);
  const mariadb = await serverVersion(admin);
  log('creating tablegate_bench.items (100,000 rows)…');
  await createBenchDatabase(admin);
  const credentials = await createBenchUser(admin);
  const db = { host: dbAdmin.host, port: dbAdmin.port, ...credentials };

  const wanted = SERVERS.filter((s) => !settings.servers || settings.servers.includes(s.key));
  // A scenario that is part of another runs with it (`i-all` with `i`).
  const scenarios = SCENARIOS.filter(
    (s) =>
      !settings.scenarios ||
      settings.scenarios.includes(s.id) ||
      (s.partOf !== undefined && settings.scenarios.includes(s.partOf)),
  );
  for (const scenario of scenarios) {
    if (scenario.setup) {
      log(`setting up scenario ${scenario.id}…`);
      await scenario.setup(admin);
    }
  }

  log('installing xmysql and mysql-rest from the npm registry into a temporary folder…');
  const tools = {};
  const versions = { tablegate: shell('git', ['-C', REPO, 'rev-parse', '--short', 'HEAD']) };
  if (shell('git', ['-C', REPO, 'status', '--porcelain', 'src']))
    versions.tablegate += ' + uncommitted src/';
  const unavailable = new Map();
  await Promise.all(
    wanted
      .filter((s) => s.npm)
      .map(async (s) => {
        try {
          tools[s.key] = await installTool(s.npm, tmp);
          versions[s.key] = tools[s.key].version;
        } catch (error) {
          unavailable.set(s.key, `cannot be installed: ${error.message.split('\n')[0]}`);
        }
      }),
  );

  const running = [];
  for (const definition of wanted) {
    if (unavailable.has(definition.key)) continue;
    log(`starting ${definition.key}…`);
    try {
      // tablegate and the floor write their collections into their logs (promoted bytes).
      const tracesGc = settings.traceGc && /^(tablegate|floor)/.test(definition.key);
      const server = await definition.start({
        db,
        tmp,
        poolSize: settings.poolSize,
        tools,
        ...(tracesGc ? { extraNodeArgs: [TRACE_GC] } : {}),
      });
      running.push({
        ...server,
        label: definition.label,
        authMode: definition.authMode === true,
        tracesGc,
      });
    } catch (error) {
      unavailable.set(
        definition.key,
        `does not start on Node ${process.versions.node}: ${error.message.split('\n')[0]}`,
      );
    }
  }
  for (const [key, reason] of unavailable) log(`${key} ${reason}`);

  const results = [];
  for (const [index, scenario] of scenarios.entries()) {
    log(`scenario ${scenario.id}: ${scenario.title}`);
    let rows;
    if (scenario.kind === 'load') rows = await loadScenario(scenario, running, index);
    else if (scenario.kind === 'big') rows = await bigScenario(scenario, running);
    else rows = await uploadScenario(scenario, running);
    results.push(...rows);
    for (const [key, reason] of unavailable) {
      const authMode = SERVERS.find((s) => s.key === key)?.authMode === true;
      if (scenario.servers ? !scenario.servers.includes(key) : authMode) continue;
      results.push({ scenario: scenario.id, server: key, state: 'unavailable', reason, rps: null });
    }
  }

  for (const server of running) await stopChild(server.child);

  const labels = wanted.map((s) => ({
    key: s.key,
    label: versions[s.key] ? `${s.label} ${versions[s.key]}` : s.label,
  }));
  const firstLine = (text) => text.split('\n')[0];
  const memLine = shell('free', ['-h']).split('\n')[1]?.replace(/\s+/g, ' ') ?? '';
  const report = [
    `## Bench run ${shell('date', [])}`,
    '',
    `- machine: ${os.availableParallelism()} cores (nproc ${shell('nproc', [])}), ${firstLine(os.cpus()[0]?.model ?? '')}; free -h: \`${memLine}\``,
    `- Node ${process.version}, MariaDB ${mariadb}`,
    `- ${settings.connections} connections, warm-up ${settings.warmupSeconds} s, ${settings.rounds} rounds × ${settings.seconds} s per server and scenario (round-robin), MySQL pool 10 everywhere`,
    `- whole run: ${((Date.now() - started) / 60000).toFixed(1)} min; 1-minute load average ${loadAtStart.toFixed(2)} at the start, ${os.loadavg()[0].toFixed(2)} at the end; CPU time stolen by the hypervisor (other guests): ${stolenPercent(ticksAtStart, machineTicks()).toFixed(1)} %`,
    '',
    resultTable(results, scenarios, labels, floorOf(scenarios)),
    '',
    '### Targets',
    '',
    targetLines(results, floorOf(scenarios)),
    '',
  ].join('\n');
  process.stdout.write(report);
  process.stdout.write(await binlogScenarios());
  const failed = results.some((r) => r.server === 'tablegate' && r.state === 'FAIL');
  return failed ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  log(`bench failed: ${error.stack ?? error}`);
} finally {
  await cleanup();
}
process.exit(code);
