#!/usr/bin/env node
/**
 * The cluster drill (docs/operations.md): a 3-node MariaDB Galera cluster, HAProxy in front of it,
 * three tablegate gateways in auth mode (one JWT secret, one uploads directory) behind an HTTP
 * HAProxy, a mixed load through it, and faults during the load: SIGKILL of a database node and
 * its restart, SIGKILL of a gateway and its restart, a rolling SIGTERM restart of every gateway.
 * It prints what failed and for how long, checks the database against what the clients were told,
 * and stops everything it started, also on failure. A change-feed subscriber stays open across
 * the faults and must miss no committed row. `npm run drill:cluster`; see bench/README.md.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FeedWatcher } from './cluster/feed.mjs';
import { GaleraCluster, missingGaleraTools, seconds } from './cluster/galera.mjs';
import { CHECK_USER, Haproxy } from './cluster/haproxy.mjs';
import { closeLoadAgent, Ledger, send, Worker } from './cluster/load.mjs';
import { startChild, stopAll, stopChild, tail } from './lib/processes.mjs';
import { CLI, freePort } from './lib/servers.mjs';

const env = process.env;
const WORKERS = Number(env.DRILL_WORKERS ?? 12);
const COMPARE_SECONDS = Number(env.DRILL_COMPARE_SECONDS ?? 12);
const CONSISTENCY = env.DRILL_READ_CONSISTENCY ?? 'eventual';
const NODE_KILL_TARGET_S = 7;
/** Longer than HAProxy needs to mark a gateway down: two checks 0.5 s apart (cluster/haproxy.mjs). */
const SHUTDOWN_DELAY = env.DRILL_SHUTDOWN_DELAY ?? '2s';
const DB = 'drill';
const DB_USER = 'drill';
const DB_PASSWORD = randomBytes(12).toString('hex');
const JWT_SECRET = randomBytes(32).toString('hex');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const started = Date.now();
const log = (line) => process.stderr.write(`[${seconds(started).padStart(6)} s] ${line}\n`);

class Gateway {
  constructor(index, dir) {
    this.index = index;
    this.name = `gateway${index + 1}`;
    this.dir = dir;
    this.logFile = path.join(dir, `${this.name}.log`);
    this.child = null;
    /** Requests it served in earlier lives (its counters restart with the process). */
    this.servedBefore = 0;
  }

  async allocate() {
    this.port = await freePort();
    this.metricsPort = await freePort();
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts it with the settings of its last start unless told others. */
  async start({ dbPort = this.dbPort, consistency = this.consistency, redis = this.redis } = {}) {
    Object.assign(this, { dbPort, consistency, redis });
    const args = [
      CLI,
      'run',
      'auth',
      // A port (a front end of HAProxy), or a host list (`-h` failover, no proxy).
      '-h',
      typeof dbPort === 'number' ? '127.0.0.1' : dbPort,
      '-P',
      typeof dbPort === 'number' ? String(dbPort) : '3306',
      '-u',
      DB_USER,
      '-D',
      DB,
      '-o',
      String(this.port),
      '--listen-host',
      '127.0.0.1',
      '--log-level',
      'warn',
      '--uploads-dir',
      path.join(this.dir, 'shared-uploads'),
      '--metrics-port',
      String(this.metricsPort),
      // HAProxy's X-Forwarded-For names each client (cluster/haproxy.mjs).
      '--trust-proxy',
      'loopback',
      '--shutdown-delay',
      SHUTDOWN_DELAY,
      ...(consistency === 'eventual' ? [] : ['--read-consistency', consistency]),
      ...(redis ? ['--redis-url', 'redis://127.0.0.1:6379'] : []),
    ];
    this.child = startChild(process.execPath, args, {
      logFile: this.logFile,
      env: { ...env, TABLEGATE_DB_PASSWORD: DB_PASSWORD, TABLEGATE_JWT_SECRET: JWT_SECRET },
    });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(`${this.name} exited while starting:\n${tail(this.logFile)}`);
      }
      if ((await send(this.url, { path: '/health', timeoutMs: 2000 })).status === 200) return;
      await sleep(100);
    }
    throw new Error(`${this.name} did not become healthy:\n${tail(this.logFile)}`);
  }

  /** Requests this process has answered so far, from its Prometheus counter. */
  async served() {
    const result = await send(`http://127.0.0.1:${this.metricsPort}`, { path: '/metrics' });
    if (result.status !== 200) return 0;
    let total = 0;
    for (const line of result.raw.toString('utf8').split('\n')) {
      if (line.startsWith('tablegate_http_requests_total{') && !line.includes('route="/health"')) {
        total += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
    }
    return total;
  }

  /** Keeps the counters of this life before it ends. */
  async banked() {
    this.servedBefore += await this.served().catch(() => 0);
  }

  async kill() {
    await this.banked();
    this.child.kill('SIGKILL');
    await this.child.exited;
  }

  async terminate() {
    await this.banked();
    return stopChild(this.child, 'SIGTERM', 15_000);
  }
}

/** The built CLI's --help, to learn which options it has. */
async function cliHelp() {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, '--help'], (_error, stdout) => resolve(String(stdout)));
  });
}

async function redisAnswers() {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const socket = net.connect(6379, '127.0.0.1');
    socket.setTimeout(1000);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      resolve(data.toString().startsWith('+PONG'));
      socket.destroy();
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      resolve(false);
      socket.destroy();
    });
  });
}

async function prepareDatabase(node) {
  await node.query(`CREATE USER '${CHECK_USER}'@'127.0.0.1'`);
  await node.query(`CREATE DATABASE ${DB}`);
  await node.query(
    `CREATE TABLE ${DB}.events (
       id BIGINT AUTO_INCREMENT PRIMARY KEY,
       ref VARCHAR(40) NOT NULL,
       worker INT NOT NULL,
       qty INT NOT NULL,
       note VARCHAR(64),
       KEY by_ref (ref),
       KEY by_worker (worker, qty)
     )`,
  );
  await node.query(`CREATE USER '${DB_USER}'@'127.0.0.1' IDENTIFIED BY ?`, [DB_PASSWORD]);
  await node.query(`GRANT ALL ON ${DB}.* TO '${DB_USER}'@'127.0.0.1'`);
  // The change feed reads the binary log (docs/changes.md).
  await node.query(`GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '${DB_USER}'@'127.0.0.1'`);
}

/** Reads each node has run: its Com_select (prepared SELECTs count there too). */
async function selectCounts(cluster) {
  return Promise.all(
    cluster.nodes.map(async (node) => {
      const [rows] = await node.query("SHOW GLOBAL STATUS LIKE 'Com_select'").catch(() => [[]]);
      return Number(rows[0]?.Value ?? 0);
    }),
  );
}

/**
 * Median latency of 300 point reads one after another with nothing else running: what one read
 * costs in itself, where the read consistency's wait shows without the load's noise.
 */
async function sequentialReadLatency(base, worker) {
  const times = [];
  for (let i = 0; i < 300; i++) {
    const id = worker.ownIds[i % worker.ownIds.length];
    const started = performance.now();
    const result = await send(base, {
      path: `/table/events/read?$filter=${encodeURIComponent(`id eq ${id}`)}`,
      headers: worker.auth,
    });
    if (result.status === 200) times.push(performance.now() - started);
  }
  return percentile(
    times.sort((a, b) => a - b),
    50,
  );
}

function codeList(codes) {
  return [...codes].map(([code, n]) => `${n} × ${code}`).join(', ');
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Per phase: requests, failures, the window from the first failure's start to the last's end. */
function phaseSummary(ledger, phases) {
  return phases.map(({ name, at }) => {
    const requests = ledger.requests.filter((r) => r.phase === name);
    const failed = requests.filter((r) => !r.ok);
    const window =
      failed.length === 0
        ? 0
        : (Math.max(...failed.map((r) => r.ended)) - Math.min(...failed.map((r) => r.started))) /
          1000;
    const slowest = Math.max(0, ...requests.map((r) => r.ended - r.started)) / 1000;
    const codes = new Map();
    for (const r of failed) {
      const key = `${r.status} ${r.code ?? ''}`.trim();
      codes.set(key, (codes.get(key) ?? 0) + 1);
    }
    return { name, at, requests: requests.length, failed: failed.length, window, slowest, codes };
  });
}

/** Every node against the ledger: acknowledged rows once, nothing doubled, updates kept. */
async function checkRows(cluster, ledger) {
  const problems = [];
  const perNode = [];
  /** Rows of creates whose client got an error (or no answer) but which committed. */
  const failedButApplied = [];
  for (const node of cluster.nodes) {
    const [rows] = await node.query(`SELECT id, ref, qty FROM ${DB}.events`);
    perNode.push(rows.length);
    const counts = new Map();
    const qtyById = new Map();
    for (const row of rows) {
      counts.set(row.ref, (counts.get(row.ref) ?? 0) + 1);
      qtyById.set(Number(row.id), row.qty);
    }
    let missing = 0;
    let doubled = 0;
    let appliedAnyway = 0;
    for (const [ref, state] of ledger.refs) {
      const count = counts.get(ref) ?? 0;
      if (state === 'acked' && count === 0) missing++;
      if (state === 'failed' && count === 1) appliedAnyway++;
      if (count > 1) doubled++;
    }
    failedButApplied.push(appliedAnyway);
    const unknown = [...counts.keys()].filter((ref) => !ledger.refs.has(ref)).length;
    let lostUpdates = 0;
    for (const [id, attempts] of ledger.updates) {
      const lastAcked = attempts.findLastIndex((a) => a.acked);
      const allowed = new Set(attempts.slice(lastAcked).map((a) => a.qty));
      if (!allowed.has(qtyById.get(id))) lostUpdates++;
    }
    if (missing) problems.push(`${node.name}: ${missing} acknowledged rows missing`);
    if (doubled) problems.push(`${node.name}: ${doubled} rows written twice`);
    if (unknown) problems.push(`${node.name}: ${unknown} rows nobody sent`);
    if (lostUpdates) problems.push(`${node.name}: ${lostUpdates} rows lost an acknowledged update`);
  }
  return { problems, perNode, failedButApplied };
}

async function checkUploads(gateways, ledger, token) {
  let checked = 0;
  const problems = [];
  for (const upload of ledger.uploads) {
    for (const gateway of gateways) {
      const result = await send(gateway.url, {
        path: `/@/${upload.filename}`,
        headers: { authorization: `Bearer ${token}` },
      });
      checked++;
      if (result.status !== 200 || !result.raw.equals(upload.content)) {
        problems.push(`${upload.filename} from ${gateway.name}: ${result.status}`);
      }
    }
  }
  return { checked, problems };
}

async function runLoad(workers, ledger, phase) {
  ledger.phase = phase;
  return workers.map((worker) => worker.loop());
}

async function stopLoad(workers, loops) {
  for (const worker of workers) worker.stop();
  await Promise.all(loops);
}

function throughput(ledger, phase, ms) {
  const requests = ledger.requests.filter((r) => r.phase === phase);
  const latencies = requests.map((r) => r.ended - r.started).sort((a, b) => a - b);
  return {
    phase,
    perSecond: requests.length / (ms / 1000),
    failed: requests.filter((r) => !r.ok).length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

async function main() {
  const missing = [...missingGaleraTools()];
  if (!existsSync('/usr/sbin/haproxy')) missing.push('haproxy (apt-get install haproxy)');
  if (!existsSync(CLI)) missing.push(`${CLI} (npm run build)`);
  if (missing.length > 0) {
    process.stderr.write(`drill: missing ${missing.join(', ')}\n`);
    process.exit(2);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tablegate-drill-'));
  // Run as root, the database nodes run as `mysql` (cluster/galera.mjs): they must get through.
  chmodSync(dir, 0o755);
  /** Stops every process; keeps the logs (not the data) when asked to or when a check failed. */
  const cleanup = async (passed) => {
    await stopAll();
    if (passed && !env.DRILL_KEEP_TMP) {
      rmSync(dir, { recursive: true, force: true });
      return;
    }
    for (const node of ['node1', 'node2', 'node3']) {
      rmSync(path.join(dir, 'galera', node, 'data'), { recursive: true, force: true });
    }
    log(`logs kept in ${dir}`);
  };
  process.once('SIGINT', () => cleanup(false).then(() => process.exit(130)));
  process.once('SIGTERM', () => cleanup(false).then(() => process.exit(143)));
  let code = 1;
  try {
    code = await drill(dir);
    return code;
  } finally {
    closeLoadAgent();
    await cleanup(code === 0);
  }
}

async function drill(dir) {
  const results = { checks: [] };
  const check = (ok, line) => {
    results.checks.push({ ok, line });
    log(`${ok ? 'PASS' : 'FAIL'} ${line}`);
  };

  const galeraDir = path.join(dir, 'galera');
  mkdirSync(galeraDir);
  const cluster = new GaleraCluster(galeraDir, 3);
  const clusterStart = Date.now();
  await cluster.start(log);
  results.clusterStart = seconds(clusterStart);
  await prepareDatabase(cluster.nodes[0]);
  await cluster.settle();

  const redis = await redisAnswers();
  const gateways = [0, 1, 2].map((index) => new Gateway(index, dir));
  for (const gateway of gateways) await gateway.allocate();
  const haproxy = new Haproxy(dir);
  await haproxy.allocate();
  await haproxy.start(cluster.nodes, gateways);
  const base = `http://127.0.0.1:${haproxy.ports.http}`;

  const startGateways = async (dbPort, consistency = 'eventual') => {
    for (const gateway of gateways) await gateway.start({ dbPort, consistency, redis });
    await sleep(1200); // HAProxy: two good checks (rise 2, 500 ms apart) before it sends traffic
  };

  // Users: one per worker, registered and logged in through the load balancer.
  await startGateways(haproxy.ports.dbAll);
  log(`gateways up (redis: ${redis ? 'shared limits' : 'none, per process'})`);
  const ledger = new Ledger();
  const workers = [];
  for (let index = 0; index < WORKERS; index++) {
    const credentials = {
      email: `worker${index}@drill.test`,
      password: randomBytes(9).toString('hex'),
    };
    const registered = await send(base, {
      method: 'POST',
      path: '/auth/register',
      body: credentials,
    });
    if (registered.status !== 200)
      throw new Error(`register: ${registered.status} ${registered.raw}`);
    const worker = new Worker(index, { base, ledger, credentials, seed: 16 });
    await worker.login();
    if (!worker.token) throw new Error('login failed before the load');
    workers.push(worker);
  }

  // Which database front end: every node (leastconn) or one writer with backups; and on every
  // node, what each read consistency costs and whether a client reads its own writes. Measured
  // side by side, the same load for each.
  const help = await cliHelp();
  const knowsConsistency = help.includes('--read-consistency');
  const hostList = cluster.nodes.map((node) => `127.0.0.1:${node.port}`).join(',');
  const settings = [
    { mode: 'all nodes', port: haproxy.ports.dbAll, consistency: 'eventual' },
    { mode: 'single writer', port: haproxy.ports.dbSingle, consistency: 'eventual' },
    ...(help.includes('db1,db2')
      ? [{ mode: 'gateway -h list, no proxy', port: hostList, consistency: 'eventual' }]
      : []),
    ...(knowsConsistency
      ? ['session', 'strict'].map((consistency) => ({
          mode: 'all nodes',
          port: haproxy.ports.dbAll,
          consistency,
        }))
      : []),
  ];
  results.compare = [];
  for (const setting of settings) {
    const label = `compare: ${setting.mode}, ${setting.consistency}`;
    for (const gateway of gateways) await gateway.terminate();
    await startGateways(setting.port, setting.consistency);
    const staleBefore = ledger.staleReads.length;
    for (const worker of workers) worker.gateways = gateways.map((gateway) => gateway.url);
    const loops = await runLoad(workers, ledger, label);
    await sleep(COMPARE_SECONDS * 1000);
    await stopLoad(workers, loops);
    for (const worker of workers) worker.gateways = null;
    const quietRead = await sequentialReadLatency(base, workers[0]);
    const measured = throughput(ledger, label, COMPARE_SECONDS * 1000);
    measured.codes = phaseSummary(ledger, [{ name: label }])[0].codes;
    const probes = ledger.probes.filter((probe) => probe.phase === label);
    measured.probes = probes.length;
    // Own rows not found: by a probe's read through another gateway, or by a later point read.
    const stale =
      probes.filter((probe) => !probe.found).length + ledger.staleReads.length - staleBefore;
    results.compare.push({ ...setting, ...measured, stale, quietRead });
    log(
      `${label}: ${measured.perSecond.toFixed(0)} req/s, ${measured.failed} failed, ${stale} stale reads`,
    );
  }
  const eventual = results.compare.filter((c) => c.consistency === 'eventual');
  // The faults run on one writer with backups unless told otherwise: with every gateway writing
  // through one node, two clients' writes to the same row never fail each other's
  // certification, and in the comparison it served as much as every node did (bench/README.md).
  const byChoice = { all: 0, single: 1, hosts: 2 };
  const chosen = eventual[byChoice[env.DRILL_DB_FRONTEND ?? 'single']];
  if (!chosen) throw new Error(`DRILL_DB_FRONTEND must be all, single or hosts`);
  results.chosen = chosen.mode;
  for (const gateway of gateways) await gateway.terminate();
  await startGateways(chosen.port, CONSISTENCY);
  log(`drill on "${chosen.mode}"`);

  // The drill: faults under a steady load.
  const phases = [];
  const phase = (name) => {
    ledger.phase = name;
    phases.push({ name, at: seconds(started) });
    log(`phase: ${name}`);
  };
  const readsBefore = await selectCounts(cluster);
  // The feed's subscriber: every row committed from here on must arrive, across every fault.
  const watcher = new FeedWatcher(base, workers[0].token);
  await watcher.opened();
  const [rowsAtWatch] = await cluster.nodes[1].query(`SELECT ref FROM ${DB}.events`);
  const refsAtWatch = new Set(rowsAtWatch.map((row) => row.ref));
  const loops = await runLoad(workers, ledger, 'steady');
  phases.push({ name: 'steady', at: seconds(started) });
  await sleep(6000);

  // The worst node to lose: the one taking every statement (single writer: the stick table's
  // first pick; a -h list: its first host). With all nodes in use, any one.
  const victim = chosen.mode === 'all nodes' ? cluster.nodes[1] : cluster.nodes[0];
  const victimIndex = cluster.nodes.indexOf(victim);
  const readsAtKill = await selectCounts(cluster);
  phase(`SIGKILL ${victim.name}`);
  await victim.kill();
  await sleep(12_000);
  phase(`restart ${victim.name}`);
  const rejoin = Date.now();
  await victim.start();
  results.rejoin = seconds(rejoin);
  log(`${victim.name} Synced again in ${results.rejoin} s`);
  await sleep(4000);

  phase('SIGKILL gateway1');
  await gateways[0].kill();
  await sleep(5000);
  phase('restart gateway1');
  await gateways[0].start();
  await sleep(3000);

  phase('rolling SIGTERM restart');
  for (const gateway of gateways) {
    await gateway.terminate();
    await gateway.start();
    await sleep(1500);
  }
  phase('after');
  await sleep(3000);
  await stopLoad(workers, loops);
  const drillEnd = Date.now();

  // What the clients were told against what every node holds.
  await cluster.settle();
  const readsAfter = await selectCounts(cluster);
  const reads = cluster.nodes.map((_node, index) =>
    index === victimIndex
      ? readsAtKill[index] - readsBefore[index] + readsAfter[index]
      : readsAfter[index] - readsBefore[index],
  );
  const summary = phaseSummary(ledger, phases);
  const staleInDrill = ledger.staleReads.filter((r) => !r.phase.startsWith('compare')).length;
  const rows = await checkRows(cluster, ledger);
  await watcher.quiet();
  watcher.close();
  const [rowsAtEnd] = await cluster.nodes[1].query(`SELECT ref FROM ${DB}.events`);
  const feed = watcher.account(
    rowsAtEnd.map((row) => row.ref).filter((ref) => !refsAtWatch.has(ref)),
  );
  const token = workers[0].token;
  const uploads = await checkUploads(gateways, ledger, token);
  const served = await Promise.all(
    gateways.map(async (gateway) => gateway.servedBefore + (await gateway.served())),
  );

  // Report.
  const acked = [...ledger.refs.values()].filter((state) => state === 'acked').length;
  const failedWrites = [...ledger.refs.values()].filter((state) => state === 'failed').length;
  const out = [];
  out.push(`## Cluster drill, ${new Date().toISOString()}`, '');
  out.push(
    `3 Galera nodes (started in ${results.clusterStart} s), HAProxy ${chosen.mode}, 3 gateways ` +
      `(auth, --read-consistency ${CONSISTENCY}, limits ${redis ? 'in Redis' : 'per process'}), ` +
      `${WORKERS} clients through HTTP HAProxy; ${ledger.requests.length} requests in all.`,
    '',
  );
  out.push(
    '| database front end | read consistency | req/s | failed | p50 ms | p99 ms | write-then-read probes | own rows not found | one read alone, ms | failures |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
  );
  for (const c of results.compare) {
    out.push(
      `| ${c.mode} | ${c.consistency} | ${c.perSecond.toFixed(0)} | ${c.failed} | ${c.p50.toFixed(1)} | ${c.p99.toFixed(1)} | ${c.probes} | ${c.stale} | ${c.quietRead.toFixed(2)} | ${codeList(c.codes)} |`,
    );
  }
  out.push('', '| phase | requests | failed | failure window s | slowest request s | failures |');
  out.push('|---|---:|---:|---:|---:|---|');
  for (const s of summary) {
    const codes = codeList(s.codes);
    out.push(
      `| ${s.name} | ${s.requests} | ${s.failed} | ${s.window.toFixed(2)} | ${s.slowest.toFixed(2)} | ${codes} |`,
    );
  }
  out.push(
    '',
    `Rows per node at the end: ${rows.perNode.join(', ')} (created and acknowledged: ${acked}; rows of failed creates: ${failedWrites}, of which committed all the same: ${rows.failedButApplied[0]}).`,
  );
  out.push(
    `Reads (Com_select) per node during the drill: ${cluster.nodes.map((n, i) => `${n.name} ${reads[i]}`).join(', ')}.`,
  );
  out.push(
    `Requests per gateway (from /metrics): ${gateways.map((g, i) => `${g.name} ${served[i]}`).join(', ')}.`,
  );
  out.push(
    `Point reads of an acknowledged row that found nothing (read-your-writes misses) during the faults: ${staleInDrill}.`,
  );
  out.push(
    `Change feed (one subscriber through HTTP HAProxy, open across every fault): ${feed.rows} rows committed, ${feed.missed} never arrived, ${feed.twice} arrived twice; ${feed.reconnects} reconnects${feed.ended.length ? `; ended by the gateway: ${feed.ended.slice(0, 3).join('; ')}` : ''}.`,
  );
  out.push(`${victim.name} rejoined (IST) and was Synced ${results.rejoin} s after its restart.`);
  out.push(`Drill load ran ${((drillEnd - started) / 1000).toFixed(0)} s after start.`, '');
  process.stdout.write(`${out.join('\n')}\n`);

  const byName = new Map(summary.map((s) => [s.name, s]));
  const nodeKill = byName.get(`SIGKILL ${victim.name}`);
  check(
    rows.problems.length === 0,
    `every acknowledged write on every node exactly once${rows.problems.length ? `: ${rows.problems.join('; ')}` : ''}`,
  );
  check(
    new Set(rows.perNode).size === 1,
    `every node holds the same rows (${rows.perNode.join(', ')})`,
  );
  check(
    nodeKill.window <= NODE_KILL_TARGET_S,
    `database node kill: requests failed for ${nodeKill.window.toFixed(2)} s (target ≤ ${NODE_KILL_TARGET_S} s)`,
  );
  check(
    feed.missed === 0 && feed.rows > 0,
    `change feed: ${feed.missed} of ${feed.rows} committed rows never arrived (target 0)`,
  );
  const rolling = byName.get('rolling SIGTERM restart');
  check(
    rolling.failed === 0,
    `rolling SIGTERM restart: ${rolling.failed} failed requests (target 0)`,
  );
  const gatewayKill = byName.get('SIGKILL gateway1');
  log(
    `gateway kill: ${gatewayKill.failed} failed over ${gatewayKill.window.toFixed(2)} s (reported)`,
  );
  check(
    reads.filter((n) => n > 0).length > 1,
    `reads served by more than one node (${reads.join(', ')})`,
  );
  check(
    served.every((n) => n > 0),
    `every gateway served requests (${served.join(', ')})`,
  );
  check(
    uploads.problems.length === 0 && uploads.checked > 0,
    `every upload served by every gateway (${uploads.checked} downloads${uploads.problems.length ? `: ${uploads.problems.slice(0, 3).join('; ')}` : ''})`,
  );
  if (CONSISTENCY !== 'eventual') {
    check(
      staleInDrill === 0,
      `read-your-writes with --read-consistency ${CONSISTENCY}: ${staleInDrill} misses`,
    );
  }
  return results.checks.every((c) => c.ok) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`drill failed: ${error.stack ?? error}\n`);
    process.exit(1);
  },
);
