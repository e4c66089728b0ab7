/**
 * Memory under concurrency: the built gateway (dist/cli.js) serves 16 concurrent reads
 * of every row of a 100,000-row table. Each answer must be complete, valid JSON with the 100,000
 * rows in id order. Reports the gateway's RSS when idle and its peak (VmHWM, reset through
 * /proc/<pid>/clear_refs before each phase) for one read alone and for the 16 at once.
 *
 *   npm run build && node bench/concurrent-reads.mjs
 *
 * Environment: BENCH_DB_HOST/PORT/USER/PASSWORD (127.0.0.1, 3306, root, ''); the database
 * `tablegate_reads` is created (100,000 rows, about 2 s) and dropped after.
 * BENCH_READERS (16), BENCH_ROWS (100000), BENCH_POOL_SIZE (10, the default),
 * BENCH_RSS_DELTA_MIB (fail when the peak of the 16 is more than this over idle; default 128).
 * Linux only (/proc). Exit code 1 when an answer is incomplete or wrong, or memory is over.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { mib, PeakWatch, readMemory } from './lib/proc.mjs';
import { startChild, stopAll, stopChild, tail } from './lib/processes.mjs';

const env = process.env;
const READERS = Number(env.BENCH_READERS ?? 16);
const ROWS = Number(env.BENCH_ROWS ?? 100_000);
const POOL_SIZE = Number(env.BENCH_POOL_SIZE ?? 10);
const DELTA_LIMIT_MIB = Number(env.BENCH_RSS_DELTA_MIB ?? 128);
const DATABASE = 'tablegate_reads';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli.js');
const admin = {
  host: env.BENCH_DB_HOST ?? '127.0.0.1',
  port: Number(env.BENCH_DB_PORT ?? 3306),
  user: env.BENCH_DB_USER ?? 'root',
  password: env.BENCH_DB_PASSWORD ?? '',
};

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function createDatabase() {
  const connection = await mysql.createConnection({ ...admin, multipleStatements: true });
  try {
    await connection.query(`
      DROP DATABASE IF EXISTS ${DATABASE};
      CREATE DATABASE ${DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
      USE ${DATABASE};
      CREATE TABLE items (
        id INT PRIMARY KEY, name VARCHAR(64) NOT NULL, category VARCHAR(32) NOT NULL,
        price DECIMAL(10,2) NOT NULL, qty INT NOT NULL, created_at DATETIME NOT NULL
      );
      INSERT INTO items
        SELECT seq, CONCAT('item-', LPAD(seq, 6, '0')), ELT(1 + seq % 4, 'books', 'games', 'tools', 'toys'),
               (seq * 7919 % 100000) / 100, seq * 31 % 1000, TIMESTAMP'2024-01-01 00:00:00' + INTERVAL seq MINUTE
          FROM seq_1_to_${ROWS};`);
  } finally {
    await connection.end();
  }
}

async function dropDatabase() {
  const connection = await mysql.createConnection(admin);
  try {
    await connection.query(`DROP DATABASE IF EXISTS ${DATABASE}`);
  } finally {
    await connection.end();
  }
}

async function startGateway(port, dir) {
  const logFile = path.join(dir, 'tablegate.log');
  const child = startChild(
    process.execPath,
    [
      cli,
      'run',
      '-h',
      admin.host,
      '-u',
      admin.user,
      '-P',
      String(admin.port),
      '-D',
      DATABASE,
      '-o',
      String(port),
      '--listen-host',
      '127.0.0.1',
      '--pool-size',
      String(POOL_SIZE),
      '--log-level',
      'warn',
      '--uploads-dir',
      path.join(dir, 'uploads'),
    ],
    {
      cwd: root,
      env: {
        ...env,
        HOME: dir,
        TABLEGATE_DB_PASSWORD: admin.password,
        TABLEGATE_MAX_CLIENT_REQUESTS: '0',
      },
      logFile,
    },
  );
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`tablegate exited: ${tail(logFile)}`);
    if (tail(logFile, 3).includes('tablegate listening')) return child;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`tablegate did not start: ${tail(logFile)}`);
}

/** One read of every row; resolves with its size, time and what is wrong with it (or null). */
function readAll(port) {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks = [];
    const request = http.get(
      { host: '127.0.0.1', port, path: '/table/items/read?$orderby=id', agent: false },
      (response) => {
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('error', (error) => resolve({ problem: String(error) }));
        response.on('end', () => {
          const body = Buffer.concat(chunks);
          const ms = Date.now() - started;
          if (response.statusCode !== 200) {
            resolve({ ms, bytes: body.length, problem: `status ${response.statusCode}` });
            return;
          }
          let rows;
          try {
            rows = JSON.parse(body.toString('utf8'));
          } catch (error) {
            resolve({ ms, bytes: body.length, problem: `not valid JSON: ${error.message}` });
            return;
          }
          let problem = null;
          if (!Array.isArray(rows) || rows.length !== ROWS) {
            problem = `${Array.isArray(rows) ? rows.length : typeof rows} rows instead of ${ROWS}`;
          } else {
            for (let i = 0; i < rows.length; i++) {
              if (rows[i].id !== i + 1) {
                problem = `row ${i} has id ${rows[i].id}`;
                break;
              }
            }
            const last = rows[ROWS - 1];
            if (!problem && last.name !== `item-${String(ROWS).padStart(6, '0')}`) {
              problem = `last row is ${JSON.stringify(last)}`;
            }
          }
          resolve({ ms, bytes: body.length, problem });
        });
      },
    );
    request.on('error', (error) => resolve({ problem: String(error) }));
  });
}

async function phase(pid, port, readers) {
  const watch = new PeakWatch(pid, 20).start();
  const started = Date.now();
  const results = await Promise.all(Array.from({ length: readers }, () => readAll(port)));
  const ms = Date.now() - started;
  const { idle, peak } = watch.stop();
  return { results, ms, idle, peak };
}

const fmt = (bytes) => mib(bytes).toFixed(1);

async function main() {
  if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run npm run build first');
  const newest = statSync(path.join(root, 'src')).mtimeMs;
  if (newest > statSync(cli).mtimeMs) {
    process.stderr.write('warning: src/ may be newer than dist/: run npm run build\n');
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tablegate-reads-'));
  let failed = false;
  try {
    process.stderr.write(`creating ${DATABASE} with ${ROWS} rows…\n`);
    await createDatabase();
    const port = await freePort();
    const child = await startGateway(port, dir);
    // Warm-up: one read, so that the idle figure is of a gateway that has served once.
    const warm = await readAll(port);
    if (warm.problem) throw new Error(`warm-up read: ${warm.problem}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const idle = readMemory(child.pid)?.rss ?? null;
    const single = await phase(child.pid, port, 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const many = await phase(child.pid, port, READERS);
    const problems = [...single.results, ...many.results].filter((r) => r.problem);
    const bytes = many.results.reduce((n, r) => n + (r.bytes ?? 0), 0);
    const times = many.results.map((r) => r.ms).sort((a, b) => a - b);
    console.log(
      `concurrent reads: ${READERS} × ${ROWS} rows (${fmt(bytes / READERS)} MiB each), pool ${POOL_SIZE}, Node ${process.version}, ${os.cpus().length} cores`,
    );
    console.log(`  one read alone:   ${single.ms} ms; peak RSS ${fmt(single.peak)} MiB`);
    console.log(
      `  ${READERS} at once:       all done in ${many.ms} ms (each ${times[0]}–${times.at(-1)} ms, median ${times[Math.floor(times.length / 2)]}); ${fmt(bytes)} MiB served`,
    );
    console.log(
      `  RSS: idle ${fmt(idle)} MiB → peak ${fmt(many.peak)} MiB (VmHWM) with ${READERS} reads: +${fmt(many.peak - idle)} MiB (one read: +${fmt(single.peak - idle)} MiB)`,
    );
    if (problems.length > 0) {
      failed = true;
      console.log(`  FAILED: ${problems.length} answers wrong: ${problems[0].problem}`);
    } else {
      console.log(`  all ${READERS + 1} answers complete, valid JSON, ${ROWS} rows in id order`);
    }
    if (mib(many.peak - idle) > DELTA_LIMIT_MIB) {
      failed = true;
      console.log(`  FAILED: peak is more than ${DELTA_LIMIT_MIB} MiB over idle`);
    }
    await stopChild(child, 'SIGTERM');
  } finally {
    await stopAll();
    await dropDatabase().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
  process.exitCode = failed ? 1 : 0;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    stopAll().finally(() => process.exit(130));
  });
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  stopAll().finally(() => process.exit(1));
});
