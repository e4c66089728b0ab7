#!/usr/bin/env node
/**
 * The body timeout and the connection bound (docs/operations.md), measured from outside: starts the
 * built gateway (dist/cli.js, or BENCH_TABLEGATE_CLI to compare another build) in open mode and (A)
 * sends 20 JSON bodies that trickle one byte every 5 s, noting when and how each connection ends
 * while another client reads; (B) opens 1,100 idle connections and counts how many the gateway
 * keeps. Prints one line per part. Not part of `npm test`. Run: `npm run build && node
 * bench/slow-bodies.mjs`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { adminConfig, connectAdmin } from './lib/database.mjs';
import { startGatewayProcess } from './lib/processes.mjs';

const cli = process.env.BENCH_TABLEGATE_CLI ?? path.resolve('dist/cli.js');
const TRICKLERS = 20;
const TRICKLE_MS = 5000;
const OBSERVE_MS = 45_000;
const FLOOD = 1100;
const log = (text) => process.stderr.write(`${text}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function startGateway(database, home) {
  const { child, url } = await startGatewayProcess(cli, { admin: adminConfig(), database, home });
  return { child, url: new URL(url) };
}

function timedRead(url, localAddress) {
  const started = performance.now();
  return new Promise((resolve) => {
    const request = http.get(
      new URL('/table/t/read?$top=1', url),
      { agent: false, localAddress },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve({ status: response.statusCode, ms: performance.now() - started }),
        );
      },
    );
    request.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
  });
}

/** A POST whose 100,000-byte body arrives one byte every TRICKLE_MS; resolves when it ends. */
function trickler(url, started) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) });
    let answer = '';
    let timer;
    socket.on('connect', () => {
      socket.write(
        'POST /table/t/create HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
          'Content-Length: 100000\r\n\r\n{"name":"',
      );
      timer = setInterval(() => socket.writable && socket.write('x'), TRICKLE_MS);
    });
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ status: Number(answer.split(' ')[1] ?? 0), s: (Date.now() - started) / 1000 });
    });
    setTimeout(() => {
      clearInterval(timer);
      resolve({ status: 'still open', s: OBSERVE_MS / 1000 });
      socket.destroy();
    }, OBSERVE_MS);
  });
}

async function partA(url) {
  const started = Date.now();
  const ends = Array.from({ length: TRICKLERS }, () => trickler(url, started));
  const reads = [];
  while (Date.now() - started < OBSERVE_MS - 2000) {
    reads.push(await timedRead(url, '127.0.0.2'));
    await sleep(2000);
  }
  const results = await Promise.all(ends);
  const byOutcome = {};
  for (const { status, s } of results) {
    const key = String(status);
    byOutcome[key] ??= [];
    byOutcome[key].push(s);
  }
  const outcomes = Object.entries(byOutcome)
    .map(([status, times]) => {
      const when =
        status === 'still open'
          ? `after ${OBSERVE_MS / 1000} s`
          : `after ${Math.min(...times).toFixed(1)}–${Math.max(...times).toFixed(1)} s`;
      return `${times.length} × ${status} ${when}`;
    })
    .join(', ');
  const slowest = Math.max(...reads.map((r) => r.ms));
  const ok = reads.filter((r) => r.status === 200).length;
  return `(A) ${TRICKLERS} JSON bodies trickled 1 byte / ${TRICKLE_MS / 1000} s: ${outcomes}; another client's reads meanwhile: ${ok}/${reads.length} × 200, slowest ${Math.round(slowest)} ms`;
}

async function partB(url) {
  const sockets = [];
  let closedAtOnce = 0;
  let counting = true;
  await Promise.all(
    Array.from(
      { length: FLOOD },
      () =>
        new Promise((resolve) => {
          const socket = net.connect({ host: url.hostname, port: Number(url.port) });
          sockets.push(socket);
          const opened = Date.now();
          socket.on('error', () => {});
          socket.on('close', () => {
            if (counting && Date.now() - opened < 2000) closedAtOnce++;
          });
          socket.on('connect', () => setTimeout(resolve, 1000));
          socket.on('close', resolve);
        }),
    ),
  );
  counting = false;
  const kept = sockets.filter((s) => !s.destroyed).length;
  for (const socket of sockets) socket.destroy();
  await sleep(500);
  const after = await timedRead(url, '127.0.0.2');
  return `(B) ${FLOOD} idle connections: ${kept} kept, ${closedAtOnce} closed at once; a read after they left: ${after.status} in ${Math.round(after.ms)} ms`;
}

const admin = await connectAdmin(adminConfig());
const database = `tablegate_slow_bodies_${randomBytes(4).toString('hex')}`;
const home = mkdtempSync(path.join(os.tmpdir(), 'tablegate-slow-bodies-'));
await admin.query(`CREATE DATABASE ${database}`);
await admin.query(`CREATE TABLE ${database}.t (id INT AUTO_INCREMENT PRIMARY KEY, name TEXT)`);
await admin.query(`INSERT INTO ${database}.t (name) VALUES ('one')`);
const { child, url } = await startGateway(database, home);
try {
  log(`(A) ${TRICKLERS} trickled bodies, watched for ${OBSERVE_MS / 1000} s`);
  console.log(await partA(url));
  log(`(B) ${FLOOD} idle connections`);
  console.log(await partB(url));
} finally {
  child.kill('SIGTERM');
  await admin.query(`DROP DATABASE IF EXISTS ${database}`);
  await admin.end();
  rmSync(home, { recursive: true, force: true });
}
