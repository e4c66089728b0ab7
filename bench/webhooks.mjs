/**
 * Scenario (o) of `npm run bench`, also runnable alone (`node bench/webhooks.mjs`): webhooks
 * (docs/webhooks.md) on a private MariaDB with the binary log on. One gateway (dist/cli.js)
 * delivers every change of `events` to a receiver in this process that verifies each signature
 * with `standardwebhooks`, as a receiver would, and answers 204. The writer is a process of its
 * own (bench/lib/feed-writer.mjs): single-row changes at a fixed rate, each carrying the time
 * its statement was sent, so the receiver measures commit-to-delivery (the commit's own round
 * trip included).
 *
 * Two runs, side by side in one report:
 * - steady: BENCH_WEBHOOK_RATE changes a second (default 200) for BENCH_WEBHOOK_SECONDS (10),
 *   to BENCH_WEBHOOKS webhooks (default 4) on the table: p50/p99 commit-to-delivery and the
 *   gateway's CPU per delivery;
 * - burst: BENCH_WEBHOOK_BURST changes (default 5,000) written as fast as one connection
 *   commits, to one webhook: deliveries a second (one at a time, in commit order, each waiting
 *   for the receiver's answer), and how long the last one took to arrive.
 * Missed and repeated deliveries are counted (both must be 0 on a run without failures).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import mysql from 'mysql2/promise';
import { Webhook } from 'standardwebhooks';
import { cpuSeconds } from './lib/proc.mjs';
import { startChild, stopAll, stopChild, tail } from './lib/processes.mjs';
import { CLI, cleanEnv, freePort, launch, REPO } from './lib/servers.mjs';

const env = process.env;
const settings = {
  rate: Number(env.BENCH_WEBHOOK_RATE ?? 200),
  seconds: Number(env.BENCH_WEBHOOK_SECONDS ?? 10),
  webhooks: Number(env.BENCH_WEBHOOKS ?? 4),
  burst: Number(env.BENCH_WEBHOOK_BURST ?? 5000),
};
const DATABASE = 'webhook_bench';
const WRITER = path.join(REPO, 'bench', 'lib', 'feed-writer.mjs');
const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const log = (text) => process.stderr.write(`${text}\n`);
const nowUs = () => (performance.timeOrigin + performance.now()) * 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Verifies, records each delivery's latency by webhook path, answers 204. */
class Receiver {
  webhook = new Webhook(SECRET);
  /** path → { latencies (ms), ids seen, repeats, forged } */
  paths = new Map();
  server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const at = nowUs();
      const body = Buffer.concat(chunks).toString('utf8');
      const place = this.place(request.url ?? '/');
      try {
        const event = this.webhook.verify(body, request.headers);
        const id = request.headers['webhook-id'];
        if (place.ids.has(id)) place.repeats++;
        else {
          place.ids.add(id);
          const sent = Number(event.row?.sent_us);
          if (Number.isFinite(sent)) place.latencies.push((at - sent) / 1000);
          place.last = at;
        }
        response.writeHead(204).end();
      } catch {
        place.forged++;
        response.writeHead(400).end();
      }
    });
  });

  place(name) {
    let place = this.paths.get(name);
    if (place === undefined) {
      place = { latencies: [], ids: new Set(), repeats: 0, forged: 0, last: 0 };
      this.paths.set(name, place);
    }
    return place;
  }

  async start() {
    this.server.keepAliveTimeout = 60_000;
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${this.server.address().port}`;
  }

  delivered(names) {
    return names.reduce((sum, name) => sum + this.place(name).ids.size, 0);
  }

  close() {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(resolve));
  }
}

function writerChild(tmp, name) {
  const child = startChild(process.execPath, [WRITER], {
    cwd: tmp,
    env: cleanEnv(),
    logFile: path.join(tmp, `${name}.log`),
    ipc: true,
  });
  const write = (message) =>
    new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.send({ type: 'write', ...message });
      child.exited.then(({ code, signal }) =>
        reject(
          new Error(`writer exited (${signal ?? code}): ${tail(path.join(tmp, `${name}.log`))}`),
        ),
      );
    });
  return { child, write };
}

async function startGateway(db, tmp, file) {
  const port = await freePort();
  return launch(
    'tablegate-webhooks',
    process.execPath,
    [
      // BENCH_WEBHOOK_PROFILE=<dir>: a CPU profile of the gateway, written when it stops.
      ...(env.BENCH_WEBHOOK_PROFILE
        ? ['--cpu-prof', '--cpu-prof-dir', env.BENCH_WEBHOOK_PROFILE]
        : []),
      CLI,
      'run',
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
      '--change-feed',
      'on',
      '--webhooks',
      file,
    ],
    { cwd: tmp, env: cleanEnv({ TABLEGATE_DB_PASSWORD: db.password }), tmp, port },
    '/health',
  );
}

/** Waits until `names` together have `count` deliveries, or `ms` passed without progress. */
async function drained(receiver, names, count, ms = 20_000) {
  let seen = -1;
  let since = Date.now();
  while (receiver.delivered(names) < count) {
    const now = receiver.delivered(names);
    if (now !== seen) {
      seen = now;
      since = Date.now();
    } else if (Date.now() - since > ms) break;
    await sleep(50);
  }
}

async function run(db, admin, tmp, receiver, base, { name, webhooks, rate, seconds, connections }) {
  const names = Array.from({ length: webhooks }, (_, i) => `/${name}-${i}`);
  const file = path.join(tmp, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      names.map((place, i) => ({
        name: `${name}-${i}`,
        table: 'events',
        url: `${base}${place}`,
        secret: SECRET,
      })),
    ),
  );
  const gateway = await startGateway(db, tmp, file);
  try {
    const writer = writerChild(tmp, `${name}-writer`);
    const cpuBefore = cpuSeconds(gateway.pid);
    const started = performance.now();
    const written = await writer.write({
      db,
      rate,
      seconds,
      users: 1,
      seedIds: [1],
      connections,
      firstSeq: 0,
    });
    await drained(receiver, names, written.committed * webhooks);
    const elapsed = (performance.now() - started) / 1000;
    const cpu = cpuSeconds(gateway.pid) - cpuBefore;
    await stopChild(writer.child);
    const latencies = names
      .flatMap((place) => receiver.place(place).latencies)
      .sort((a, b) => a - b);
    const delivered = receiver.delivered(names);
    const repeats = names.reduce((sum, place) => sum + receiver.place(place).repeats, 0);
    const forged = names.reduce((sum, place) => sum + receiver.place(place).forged, 0);
    const lastAt = Math.max(...names.map((place) => receiver.place(place).last));
    return {
      name,
      webhooks,
      written: written.committed,
      writeRate: written.rate,
      expected: written.committed * webhooks,
      delivered,
      repeats,
      forged,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? null,
      deliveriesPerSecond: delivered / elapsed,
      lastAfterMs: (lastAt - (performance.timeOrigin + started) * 1000) / 1000,
      cpuUsPerDelivery: delivered > 0 ? (cpu * 1e6) / delivered : null,
    };
  } finally {
    await stopChild(gateway.child, 'SIGINT', 20_000);
    await admin.query(`TRUNCATE ${DATABASE}.events`);
    await admin.query(`INSERT INTO ${DATABASE}.events (id, owner, seq, sent_us, updated_at, body)
      VALUES (1, 'user0@bench.example', 0, 0, NOW(6), '')`);
  }
}

const ms = (value) => (value === null || value === undefined ? '—' : value.toFixed(1));
const int = (value) => Math.round(value).toLocaleString('en');

export async function runWebhookBench() {
  const { binlogArgs, startPrivateServer } = await import(
    pathToFileURL(path.join(path.dirname(CLI), 'demo', 'private-server.js')).href
  );
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'tablegate-webhook-bench-'));
  const loadAtStart = os.loadavg()[0];
  let mariadb = null;
  let admin = null;
  const receiver = new Receiver();
  try {
    log('scenario o: starting a private MariaDB with the binary log on…');
    mariadb = await startPrivateServer(undefined, binlogArgs());
    const db = {
      host: mariadb.host,
      port: mariadb.port,
      user: mariadb.user,
      password: mariadb.password,
      database: DATABASE,
    };
    admin = await mysql.createConnection({ ...db, database: undefined });
    await admin.query(`CREATE DATABASE ${DATABASE}`);
    // The feed bench's table (bench/lib/feed-writer.mjs writes it), one seed row to update.
    await admin.query(`CREATE TABLE ${DATABASE}.events (
      id INT AUTO_INCREMENT PRIMARY KEY, owner VARCHAR(60) NOT NULL, seq INT NOT NULL,
      sent_us BIGINT NOT NULL, updated_at DATETIME(6) NOT NULL, body VARCHAR(100) NOT NULL)`);
    await admin.query(`INSERT INTO ${DATABASE}.events (id, owner, seq, sent_us, updated_at, body)
      VALUES (1, 'user0@bench.example', 0, 0, NOW(6), '')`);
    const base = await receiver.start();
    log(
      `scenario o: steady, ${settings.rate} changes/s for ${settings.seconds} s to ${settings.webhooks} webhooks`,
    );
    const steady = await run(db, admin, tmp, receiver, base, {
      name: 'steady',
      webhooks: settings.webhooks,
      rate: settings.rate,
      seconds: settings.seconds,
      connections: 4,
    });
    log(`scenario o: burst of ${settings.burst} changes to one webhook`);
    const burst = await run(db, admin, tmp, receiver, base, {
      name: 'burst',
      webhooks: 1,
      // As fast as one connection commits: the schedule is always behind.
      rate: 1_000_000,
      seconds: settings.burst / 1_000_000,
      connections: 1,
    });
    const rows = [steady, burst].map(
      (r) =>
        `| ${r.name} | ${r.webhooks} | ${int(r.written)} at ${int(r.writeRate)}/s | ${int(r.delivered)} / ${int(r.expected)} | ${r.repeats} | ${r.forged} | ${ms(r.p50)} / ${ms(r.p99)} / ${ms(r.max)} | ${int(r.deliveriesPerSecond)} | ${ms(r.cpuUsPerDelivery)} |`,
    );
    return [
      '### (o) webhooks: commit to delivery',
      '',
      `A receiver in the bench process verifying every signature (standardwebhooks); the writer its own process; load average ${loadAtStart.toFixed(1)} at the start.`,
      '',
      '| run | webhooks | changes written | delivered / expected | repeats | bad signatures | commit → delivery p50 / p99 / max ms | deliveries/s | gateway CPU µs per delivery |',
      '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
      ...rows,
      '',
      `Burst: the last of ${int(burst.written)} changes arrived ${ms(burst.lastAfterMs)} ms after the first was sent (each webhook delivers one at a time, in commit order).`,
      '',
    ].join('\n');
  } finally {
    await receiver.close();
    await admin?.end().catch(() => {});
    await stopAll();
    await mariadb?.destroy().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(`${await runWebhookBench()}\n`);
}
