/**
 * The floor of the change-feed bench (scenario (n), bench/changes.mjs): the least a Node server
 * can do to push MySQL's binary log to browsers. The binary-log library tablegate uses
 * (@vlasky/zongji, with the options of src/changes/reader.ts) and plain node:http: every row
 * event of the database, unfiltered and unauthenticated, is written at once as one server-sent
 * event (`event:` and `data:` with the row as JSON.stringify makes it) to every open
 * `GET /changes` socket. No policy, no per-caller decision, no transaction grouping, no event
 * ids, no back-pressure. Configured by environment (FLOOR_*); prints one line when listening.
 */
import http from 'node:http';
import ZongJi from '@vlasky/zongji';

const env = process.env;
const database = env.FLOOR_DB_NAME ?? 'feed_bench';
const sockets = new Set();

const OPS = { writerows: 'insert', updaterows: 'update', deleterows: 'delete' };
const json = (value) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v));

const zongji = new ZongJi({
  host: env.FLOOR_DB_HOST ?? '127.0.0.1',
  port: Number(env.FLOOR_DB_PORT ?? 3306),
  user: env.FLOOR_DB_USER ?? 'root',
  password: env.FLOOR_DB_PASSWORD ?? '',
  dateStrings: true,
  timezone: 'Z',
  supportBigNumbers: true,
  bigNumberStrings: true,
  jsonStrings: true,
  decimalNumbers: false,
});

zongji.on('binlog', (event) => {
  const op = OPS[event.getEventName()];
  if (op === undefined) return;
  const table = event.tableMap?.[event.tableId];
  if (table === undefined) return;
  for (const row of event.rows ?? []) {
    const data = json({ op, table: table.tableName, row: op === 'update' ? row.after : row });
    const text = `event: ${op}\ndata: ${data}\n\n`;
    for (const socket of sockets) socket.write(text);
  }
});
zongji.on('error', (error) => {
  process.stderr.write(`floor: binary log: ${error.message}\n`);
  process.exit(1);
});

const ready = new Promise((resolve) => zongji.on('ready', resolve));
zongji.start({
  serverId: 0x20000000 + Math.floor(Math.random() * 0x1fffffff),
  startAtEnd: true,
  includeEvents: ['tablemap', 'writerows', 'updaterows', 'deleterows'],
  includeSchema: { [database]: true },
});

const server = http.createServer((request, response) => {
  if (request.url === '/health') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"status":"ok"}');
    return;
  }
  if (request.url !== '/changes') {
    response.writeHead(404);
    response.end();
    return;
  }
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
  });
  response.write('retry: 2000\n\n');
  sockets.add(response);
  response.on('close', () => sockets.delete(response));
});
server.maxConnections = Number(env.FLOOR_MAX_CONNECTIONS ?? 5000);

await ready;
server.listen(Number(env.FLOOR_PORT ?? 0), env.FLOOR_HOST ?? '127.0.0.1', () => {
  const { address, port } = server.address();
  process.stdout.write(`feed floor listening on http://${address}:${port}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    zongji.stop();
    for (const socket of sockets) socket.end();
    server.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
