#!/usr/bin/env node
/**
 * What Fastify itself costs per request, beside plain node:http, with no database: both answer
 * (a)'s one-row JSON and (e)'s create from memory, with the headers tablegate sends. The Fastify
 * server is set up as src/server.ts sets it up (its options and limits from dist/limits.js,
 * @fastify/cors with dist/http/cors.js's settings, the nosniff hook, the JSON body parser); the
 * node:http one is the floor's way
 * (bench/floor-server.mjs). Both are loaded at once on one CPU (the load generator on the
 * others), 8 rounds × 3 s, and the CPU each spends per request is read from /proc: the
 * difference is the framework's share of the gap between tablegate and the floor.
 *
 * BENCH_FRAMEWORK_NEIGHBOURS=n puts n more node:http servers on that CPU, loaded the same way
 * and left out of the table: a CPU shared by more busy processes, as the server's is in
 * `npm run bench` (MariaDB and the load generator beside it), where each request finds the
 * caches colder. The framework's share grows with them (bench/README.md, eleventh pass).
 *
 *   npm run build && node bench/framework-cost.mjs
 *     (BENCH_ROUNDS, BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_FRAMEWORK_NEIGHBOURS)
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { corsOptions } from '../dist/http/cors.js';
import { KEEP_ALIVE_TIMEOUT_MS, MAX_HEADER_BYTES, SOCKET_IDLE_TIMEOUT_MS } from '../dist/limits.js';
import { median } from './lib/report.mjs';
import { loadTogether, pinServers } from './lib/together.mjs';

const ROW =
  '[{"id":5,"name":"n5","category":"tools","price":0.05,"qty":7,"created_at":"2024-01-01 00:00:00"}]';
const CREATED =
  '{"success":true,"message":"Data inserted successfully","insertId":1,"affectedRows":1}';
const CORS = corsOptions('*');

/** node:http as the floor writes it: one writeHead with every header, the body read and parsed. */
function serveHttp() {
  const headers = (body) => ({
    'x-content-type-options': 'nosniff',
    'access-control-allow-origin': '*',
    'access-control-expose-headers': CORS.exposedHeaders,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  return http.createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { ...headers(ROW), vary: 'Accept' });
      res.end(ROW);
      return;
    }
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      text += chunk;
    });
    req.on('end', () => {
      JSON.parse(text);
      res.writeHead(200, headers(CREATED));
      res.end(CREATED);
    });
  });
}

/** Fastify with src/server.ts's options, CORS and nosniff hook; the routes answer from memory. */
async function serveFastify() {
  const { default: Fastify } = await import('fastify');
  const { default: cors } = await import('@fastify/cors');
  const app = Fastify({
    logger: false,
    bodyLimit: 1024 * 1024,
    trustProxy: false,
    routerOptions: { maxParamLength: 8192, ignoreDuplicateSlashes: false },
    requestTimeout: 0,
    connectionTimeout: SOCKET_IDLE_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    return503OnClosing: true,
    http: { maxHeaderSize: MAX_HEADER_BYTES, connectionsCheckingInterval: 1000 },
  });
  app.addHook('onRequest', (_request, reply, done) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    done();
  });
  await app.register(cors, CORS);
  app.get('/table/:table/:action', (_request, reply) => {
    reply.header('Vary', 'Accept').type('application/json; charset=utf-8').send(ROW);
  });
  app.post('/table/:table/:action', async (_request, reply) => {
    reply.type('application/json; charset=utf-8');
    return CREATED;
  });
  await app.ready();
  return app.server;
}

if (process.argv[2] === 'serve') {
  // A clean exit on SIGINT, so that `node --cpu-prof … serve fastify` writes its profile.
  process.on('SIGINT', () => process.exit(0));
  const server = process.argv[3] === 'fastify' ? await serveFastify() : serveHttp();
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
} else {
  await compare();
}

function start(kind) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'serve', kind], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve) => {
    child.stdout.once('data', (data) => {
      resolve({
        key: kind,
        child,
        pid: child.pid,
        base: `http://127.0.0.1:${String(data).trim()}`,
      });
    });
  });
}

async function compare() {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
  const neighbours = Number(process.env.BENCH_FRAMEWORK_NEIGHBOURS ?? 0);
  const servers = [await start('http'), await start('fastify')];
  for (let i = 0; i < neighbours; i++) servers.push(await start('http'));
  pinServers(servers);
  const requests = {
    'GET one row (as a)': () => ({ method: 'GET', path: '/table/items/read(id,5)' }),
    'POST a create (as e)': () => ({
      method: 'POST',
      path: '/table/items/create',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"bench-1","category":"tools","price":12.5,"qty":3,"created_at":"2025-06-01 12:00:00"}',
    }),
  };
  console.log(
    `${rounds} rounds × ${seconds} s, ${connections} connections to each, both at once on one CPU` +
      `${neighbours > 0 ? `, with ${neighbours} more node:http servers loaded beside them` : ''}\n`,
  );
  console.log(
    '| request | node:http µs/req | Fastify µs/req | Fastify − node:http µs | Fastify ÷ node:http | rounds (÷) |',
  );
  console.log('|---|--:|--:|--:|--:|---|');
  for (const [label, next] of Object.entries(requests)) {
    const measured = [];
    for (let round = -1; round < rounds; round++) {
      const measures = await loadTogether(servers, {
        connections,
        seconds: round < 0 ? 2 : seconds,
        nextFor: () => next,
      });
      const us = measures.slice(0, 2).map((measure) => measure.us);
      if (round >= 0) measured.push(us); // round -1 warms both up
    }
    const [plain, fastify] = [0, 1].map((i) => median(measured.map((us) => us[i])));
    const ratios = measured.map(([a, b]) => b / a);
    console.log(
      `| ${label} | ${plain.toFixed(1)} | ${fastify.toFixed(1)} | ${(fastify - plain).toFixed(1)} | ${median(ratios).toFixed(3)} | ${ratios.map((r) => r.toFixed(2)).join(' ')} |`,
    );
  }
  for (const { child } of servers) child.kill();
}
