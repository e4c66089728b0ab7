#!/usr/bin/env node
/**
 * The login limits (docs/auth.md) under parallel bursts, measured from outside: starts the built
 * gateway (dist/cli.js) in auth mode on a fresh database and sends (1) 300 parallel guesses for one
 * email, the right password among them, and (2) 1,000 parallel valid logins for one account while
 * another user logs in once from another
 * address (127.0.0.2); it prints the status counts and the other user's login time. Not part of `npm test`.
 * Run: `npm run build && node bench/login-burst.mjs` (BENCH_GUESSES, BENCH_LOGINS to change).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { adminConfig, connectAdmin } from './lib/database.mjs';
import { startGatewayProcess } from './lib/processes.mjs';

const guesses = Number(process.env.BENCH_GUESSES ?? 300);
const logins = Number(process.env.BENCH_LOGINS ?? 1000);
const cli = process.env.BENCH_TABLEGATE_CLI ?? path.resolve('dist/cli.js');
const log = (text) => process.stderr.write(`${text}\n`);

async function startGateway(database, home) {
  const { child, url } = await startGatewayProcess(cli, {
    admin: adminConfig(),
    database,
    home,
    auth: true,
  });
  return { child, url };
}

/** One request on a connection of its own, from `localAddress` (another client on loopback). */
function post(url, path, email, password, localAddress = '127.0.0.1') {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(
      url + path,
      {
        method: 'POST',
        agent: false,
        localAddress,
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve({ status: response.statusCode, ms: performance.now() - started }),
        );
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ email, password }));
  });
}

function tally(answers) {
  const counts = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return Object.entries(counts)
    .map(([status, n]) => `${n} × ${status}`)
    .join(', ');
}

const admin = await connectAdmin(adminConfig());
const database = `tablegate_login_burst_${randomBytes(4).toString('hex')}`;
const home = mkdtempSync(path.join(os.tmpdir(), 'tablegate-login-burst-'));
await admin.query(`CREATE DATABASE ${database}`);
let gateway = await startGateway(database, home);
try {
  const { url } = gateway;
  for (const email of ['victim@example.com', 'busy@example.com', 'other@example.com']) {
    await post(url, '/auth/register', email, 'the right password');
  }

  log(`(1) ${guesses} parallel guesses for one email, one of them right`);
  const right = Math.floor(guesses / 2);
  const burst = await Promise.all(
    Array.from({ length: guesses }, (_, i) =>
      post(
        url,
        '/auth/login',
        'victim@example.com',
        i === right ? 'the right password' : `wrong guess ${i}`,
      ),
    ),
  );
  console.log(`(1) ${guesses} parallel guesses: ${tally(burst)}`);
} finally {
  gateway.child.kill('SIGTERM');
}
// A new gateway, so that the failures of (1) do not count against (2).
gateway = await startGateway(database, home);
try {
  const { url } = gateway;
  const quiet = await post(
    url,
    '/auth/login',
    'other@example.com',
    'the right password',
    '127.0.0.2',
  );
  log(`(2) ${logins} parallel valid logins for one account; another user logs in meanwhile`);
  const flood = Array.from({ length: logins }, () =>
    post(url, '/auth/login', 'busy@example.com', 'the right password'),
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const other = await post(
    url,
    '/auth/login',
    'other@example.com',
    'the right password',
    '127.0.0.2',
  );
  const answers = await Promise.all(flood);
  const slowest = Math.max(...answers.map((a) => a.ms));
  console.log(
    `(2) ${logins} parallel valid logins: ${tally(answers)}, the burst took ${(slowest / 1000).toFixed(1)} s; ` +
      `another user's login: ${other.status} in ${Math.round(other.ms)} ms (alone: ${Math.round(quiet.ms)} ms)`,
  );
} finally {
  gateway.child.kill('SIGTERM');
  await admin.query(`DROP DATABASE IF EXISTS ${database}`);
  await admin.end();
  rmSync(home, { recursive: true, force: true });
}
