/**
 * HTTP fuzz (docs/errors.md: any input gets a JSON 4xx, never a 5xx): 10,000 seeded random requests
 * — paths, methods, read options, write keys and values, bodies, headers, encodings; valid-looking
 * and garbage, SQL injection attempts among them — against an open and an auth-mode gateway on one
 * fixture database, 16 at a time. Requirements: no 5xx; every error is the JSON error body; no
 * answer shows MySQL's own syntax errors, stack traces or password hashes; afterwards the same
 * tables exist, a table never written to is unchanged, row counts match the writes that were
 * answered 200, and the users table holds exactly the registrations answered 200.
 *
 * FUZZ_SEED=<n> replays a run (the seed is printed on failure); FUZZ_REQUESTS=<n> changes the count.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { RowDataPacket } from 'mysql2/promise';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { filterArb, filterText, spellingArb } from '../helpers/filter-arbitraries.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { multipartBody } from '../helpers/multipart.js';

const SEED = fuzzSeed();
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const CONCURRENCY = 16;
const REQUEST_TIMEOUT_MS = 10_000;

const FIXTURE = `
CREATE TABLE people (
  id INT AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(50) NOT NULL,
  age TINYINT UNSIGNED NULL,
  email VARCHAR(100) UNIQUE,
  score DECIMAL(6,2) NULL,
  born DATE NULL,
  active TINYINT(1) NOT NULL DEFAULT 1,
  meta JSON NULL,
  photo VARBINARY(64) NULL,
  nick VARCHAR(30) CHARACTER SET latin1 NULL
);
INSERT INTO people (name, age, email, score, born, meta)
  SELECT CONCAT('person ', seq), seq % 90, CONCAT('p', seq, '@example.com'), seq / 7, '2000-01-01' + INTERVAL seq DAY, '{"n": 1}'
  FROM seq_1_to_300;
CREATE TABLE \`order\` (\`select\` INT PRIMARY KEY, \`from\` VARCHAR(20), \`we\`\`ird\` TEXT);
INSERT INTO \`order\` SELECT seq, CONCAT('f', seq), NULL FROM seq_1_to_50;
CREATE TABLE canary (id INT PRIMARY KEY, secret VARCHAR(50) NOT NULL);
INSERT INTO canary VALUES (1, 'do not touch'), (2, 'nor this');
CREATE VIEW adults AS SELECT id, name, age FROM people WHERE age >= 18;
`;

/** Where a write to each name lands (a view writes its base table). */
const WRITE_TARGET: Readonly<Record<string, string>> = {
  people: 'people',
  adults: 'people',
  order: 'order',
};
const COLUMNS: Readonly<Record<string, readonly string[]>> = {
  people: ['id', 'name', 'age', 'email', 'score', 'born', 'active', 'meta', 'photo', 'nick'],
  adults: ['id', 'name', 'age'],
  order: ['select', 'from', 'we`ird'],
  canary: ['id', 'secret'],
};
/** A random table name may be `__proto__`: look names up as own properties only. */
function columnsOf(table: string): readonly string[] {
  return (Object.hasOwn(COLUMNS, table) ? COLUMNS[table] : undefined) ?? ['id'];
}

const FORBIDDEN_IN_ANSWERS = [
  '$argon2',
  'You have an error in your SQL syntax',
  'sqlMessage',
  'sqlState',
  '\n    at ',
];

let db: TestDatabase;
let open: TestGateway;
let auth: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  open = await startTestGateway(db.name, { bodyLimit: 64 * 1024 });
  auth = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: 'fuzz-secret-fuzz-secret-fuzz-secret-0123',
    bodyLimit: 64 * 1024,
  });
});

afterAll(async () => {
  await open?.close();
  await auth?.close();
  await db?.drop();
});

interface FuzzRequest {
  readonly target: 'open' | 'auth';
  /** Sent on a raw socket, byte for byte (no client-side checks). */
  readonly raw?: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  /** For the bookkeeping of row counts: what a 200 means. */
  readonly effect?: { kind: 'create' | 'delete' | 'register'; table: string };
}

// ---- generators ----------------------------------------------------------------------------

/** Node's client refuses bytes outside 0x21–0xff in a path: percent-encode just those. */
function pathSafe(text: string): string {
  return Array.from(text)
    .map((c) => (/^[\u0021-\u007e]$/.test(c) ? c : encodeURIComponent(c)))
    .join('');
}

/** Text for a path segment or a query value, in one of the ways clients encode it. */
const encoded = (text: string) =>
  fc
    .constantFrom<(s: string) => string>(
      encodeURIComponent,
      (s) => encodeURIComponent(s).replaceAll('%20', '+'),
      pathSafe,
      (s) => encodeURIComponent(encodeURIComponent(s)),
      (s) => `${encodeURIComponent(s)}%`,
      (s) => `${encodeURIComponent(s)}%zz%C0%AF%ED%A0%80%00`,
    )
    .map((encode) => encode(text));

const INJECTIONS = [
  "' OR '1'='1",
  "1' OR 1=1 -- ",
  '1; DROP TABLE canary',
  "name eq 'x' or 1 eq 1",
  'id eq 1) or (1 eq 1',
  'id eq 1 union select secret from canary',
  "name eq 'a'' OR ''1''=''1'",
  "contains(name, '%')",
  "startswith(name, '_')",
  'id eq 0x41',
  "name eq '\\' or 1=1 -- '",
  'name eq CHAR(65)',
  'sleep(5) eq 0',
  'id eq (select 1)',
  '`name` eq 1',
  'name eq "x"',
  '(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((id eq 1',
  `id in (${Array.from({ length: 1001 }, (_, i) => i).join(',')})`,
  'x'.repeat(5000),
  'id eq 1e400',
  'id eq -0',
  'id eq 99999999999999999999999999999999999999999999999999',
];

const junk = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(...INJECTIONS),
  fc.constantFrom('', ' ', '*', ',', '-1', '1.5', '1e3', '0x10', 'NaN', 'true', 'null', '\u0000'),
);

const tableName = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('people', 'order', 'adults', 'canary') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'users_created_by_tablegate',
      'nope',
      'PEOPLE',
      'people ',
      '..',
      'information_schema.TABLES',
      'mysql`.`user',
      "people'--",
      'people;DROP TABLE canary',
      'seq_1_to_10',
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

function readQuery(table: string) {
  const columns = columnsOf(table);
  const filterable = columns.filter((c) => /^[a-z]+$/.test(c) && c !== 'select' && c !== 'from');
  const filter = fc.oneof(
    { weight: 3, arbitrary: junk },
    {
      weight: 4,
      arbitrary:
        filterable.length > 0
          ? fc.tuple(filterArb(filterable, 3), spellingArb).map(([ast, s]) => filterText(ast, s))
          : junk,
    },
  );
  const value = (arb: fc.Arbitrary<string>) => arb.chain((v) => encoded(v));
  const option = fc.oneof(
    value(filter).map((v) => `$filter=${v}`),
    value(fc.oneof(fc.constantFrom(...columns, '*', columns.join(',')), junk)).map(
      (v) => `$select=${v}`,
    ),
    value(
      fc.oneof(
        fc.constantFrom(...columns).map((c) => `${c} desc`),
        fc.constantFrom(...columns),
        junk,
      ),
    ).map((v) => `$orderby=${v}`),
    value(fc.oneof(fc.nat(500).map(String), junk)).map((v) => `$top=${v}`),
    value(fc.oneof(fc.nat(500).map(String), junk)).map((v) => `$skip=${v}`),
    value(fc.oneof(fc.constantFrom('true', 'false'), junk)).map((v) => `$count=${v}`),
    fc.tuple(value(junk), value(junk)).map(([k, v]) => `${k}=${v}`),
    fc.constantFrom('$FILTER=id eq 1', '$foo=1', '$top', '$filter', '&&', '=', '$filter[]=x'),
  );
  return fc.array(option, { maxLength: 5 }).map((parts) => parts.join('&'));
}

const jsonValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(1e308, -1e308, 2 ** 63, 0.1, '2024-02-30', '9999-99-99', 'AAAA', '{"a":1}'),
  fc.jsonValue({ maxDepth: 2 }),
);

function rowObject(table: string) {
  const columns = columnsOf(table);
  return fc.dictionary(
    fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...columns) }, junk),
    jsonValue,
    { maxKeys: 5 },
  );
}

function body(table: string) {
  return fc.oneof(
    { weight: 4, arbitrary: rowObject(table).map((r) => JSON.stringify(r)) },
    {
      weight: 2,
      arbitrary: fc.array(rowObject(table), { maxLength: 4 }).map((r) => JSON.stringify(r)),
    },
    // A row likely to be inserted: the bookkeeping must see successes too.
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.string({ minLength: 1, maxLength: 20 }), fc.nat(120), fc.uuid())
        .map(([name, age, uuid]) =>
          JSON.stringify(
            table === 'order'
              ? { select: Number.parseInt(uuid.slice(0, 7), 16), from: name.slice(0, 20) }
              : { name, age, email: `${uuid}@example.com` },
          ),
        ),
    },
    { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '{',
        '{"name": "x",}',
        "{'name': 'x'}",
        '\uFEFF{"name": "x"}',
        '{"__proto__": {"admin": true}, "name": "x"}',
        '{"constructor": {"prototype": {"x": 1}}}',
        'null',
        '[]',
        '[[[[[[[[[[]]]]]]]]]]',
        '['.repeat(20_000) + ']'.repeat(20_000),
        `{"name": "${'x'.repeat(70_000)}"}`,
        '{"name": "\\ud800"}',
        '{"name": 1e999}',
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 100 }) },
  );
}

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant('application/json') },
  fc.constantFrom(
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/json; charset=latin1',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    '',
  ),
);

const keyValue = (table: string) =>
  fc
    .tuple(
      fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...columnsOf(table)) }, junk),
      fc.oneof(
        fc.nat(400).map(String),
        fc.string({ maxLength: 15 }).map((s) => `'${s.replaceAll("'", "''")}'`),
        junk,
        fc.constantFrom("'O''Brien, Jo'", "'unterminated", '1) or (1', '1,2', "''", '-1', '1e3'),
      ),
    )
    .chain(([key, value]) => encoded(`(${key},${value})`));

const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'authorization',
    'origin',
    'accept',
    'accept-encoding',
    'content-encoding',
    'range',
    'if-none-match',
    'x-forwarded-for',
    'access-control-request-method',
    'cookie',
  ),
  fc.oneof(
    fc.constantFrom(
      'Bearer x',
      'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOjF9.',
      'Basic YTpi',
      'https://evil.example',
      'gzip',
      'br',
      'bytes=0-1',
      'bytes=-5,9-1',
      '*',
      '127.0.0.1, ::1',
      'DELETE',
    ),
    fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\t\u0020-\u007e]/g, '')),
  ),
  { maxKeys: 3 },
);

/** Writes may go anywhere but the canary: a valid update of it through the open gateway is legitimate. */
const writeTableName = tableName.filter((table) => table !== 'canary');

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND', 'get'];

const openRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  // Reads.
  {
    weight: 10,
    arbitrary: fc
      .tuple(tableName, extraHeaders, fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST'))
      .chain(([table, headers, method]) =>
        fc.tuple(encoded(table), readQuery(table)).map(([segment, query]) => ({
          target: 'open' as const,
          method,
          path: `/table/${segment}/read${query ? `?${query}` : ''}`,
          headers,
        })),
      ),
  },
  // Creates.
  {
    weight: 6,
    arbitrary: fc.tuple(writeTableName, contentType, extraHeaders).chain(([table, type, headers]) =>
      fc.tuple(encoded(table), body(table)).map(([segment, text]) => ({
        target: 'open' as const,
        method: 'POST',
        path: `/table/${segment}/create`,
        headers: { ...headers, ...(type ? { 'content-type': type } : {}) },
        body: text,
        effect: { kind: 'create' as const, table },
      })),
    ),
  },
  // Updates and deletes.
  {
    weight: 5,
    arbitrary: fc
      .tuple(writeTableName, fc.constantFrom('update', 'delete'), contentType, extraHeaders)
      .chain(([table, action, type, headers]) =>
        fc
          .tuple(encoded(table), keyValue(table), body(table), fc.boolean())
          .map(([segment, kv, text, withBody]) => ({
            target: 'open' as const,
            method: action === 'update' ? 'PUT' : 'DELETE',
            path: `/table/${segment}/${action}${kv}`,
            headers: { ...headers, ...(type && withBody ? { 'content-type': type } : {}) },
            body: action === 'update' || withBody ? text : undefined,
            effect: action === 'delete' ? { kind: 'delete' as const, table } : undefined,
          })),
      ),
  },
  // Uploads, served files, other routes, any method on any path.
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom('files', 'file', '__proto__', ''),
        fc.string({ maxLength: 20 }),
        fc.constantFrom('image/png', 'text/html', 'application/octet-stream', ''),
        fc.string({ maxLength: 200 }),
        fc.boolean(),
      )
      .map(([name, filename, type, content, good]) => {
        const multipart = multipartBody([
          { name, filename, ...(type ? { contentType: type } : {}), body: content },
        ]);
        return {
          target: 'open' as const,
          method: 'POST',
          path: '/upload',
          headers: {
            'content-type': good ? multipart.contentType : 'multipart/form-data; boundary=nope',
          },
          body: good ? multipart.body.toString('latin1') : content,
        };
      }),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...METHODS),
        fc.oneof(
          fc.constantFrom(
            '/',
            '/health',
            '/openapi.json',
            '/docs',
            '/table',
            '/table/people',
            '/table/people/',
            '/table//read',
            '/table/people/read/',
            '/table/people/create(1,2)',
            '/table/people/update',
            '/table/people/update()',
            '/table/people/update(id)',
            '/@/',
            '/@/..%2f..%2fetc%2fpasswd',
            '/@/%2e%2e/%2e%2e/etc/passwd',
            '/@/../../../etc/passwd',
            '//etc/passwd',
            '/auth/login',
            '/auth/register',
            '/%',
            '/%zz',
            '/table/%E0%A4%A/read',
            '/table/people/read?%',
            '/table/people/read?$filter=%',
          ),
          fc.string({ maxLength: 40 }).map((s) => `/${pathSafe(s)}`),
          fc.string({ maxLength: 20 }).map((s) => `/@/${pathSafe(s)}`),
        ),
        extraHeaders,
      )
      .map(([method, path, headers]) => ({ target: 'open' as const, method, path, headers })),
  },
  // Byte-exact requests no well-behaved client sends.
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.string({ unit: 'binary', maxLength: 40 }).map((s) => `GET /table/${s}/read HTTP/1.1`),
        fc.string({ maxLength: 40 }).map((s) => `GET /table/people/read?$filter=${s} HTTP/1.1`),
        fc.constantFrom(
          'GET /table/people/read HTTP/1.0',
          'GET http://evil.example/table/people/read HTTP/1.1',
          'GET * HTTP/1.1',
          'CONNECT 127.0.0.1:3306 HTTP/1.1',
          'GET /health HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade',
          'GET /table/people/read HTTP/1.1\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings',
          'GET /table/people/read HTTP/1.1\r\nHost: a\r\nHost: b',
          'GET /table/people/read HTTP/1.1\r\nX: a\r\n b',
          'POST /table/people/create HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 3\r\nContent-Length: 4',
        ),
      )
      .map((line) => ({
        target: 'open' as const,
        raw: `${line}\r\nHost: localhost\r\nConnection: close\r\n\r\n`,
        method: 'RAW',
        path: line.slice(0, 60),
        headers: {},
      })),
  },
);

const authRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.constantFrom('/auth/register', '/auth/login'),
        fc.oneof(
          fc
            .record({
              email: fc.oneof(fc.emailAddress(), junk),
              password: fc.oneof(fc.string({ minLength: 8, maxLength: 20 }), junk),
            })
            .map((b) => JSON.stringify(b)),
          body('people'),
        ),
        contentType,
      )
      .map(([path, text, type]) => ({
        target: 'auth' as const,
        method: 'POST',
        path,
        headers: type ? { 'content-type': type } : ({} as Record<string, string>),
        body: text,
        effect:
          path === '/auth/register' ? { kind: 'register' as const, table: 'users' } : undefined,
      })),
  },
  {
    weight: 3,
    // Without a token: every one of these must be refused (a 200 write would show in the counts).
    arbitrary: openRequest.map((request) => ({ ...request, target: 'auth' as const })),
  },
);

const fuzzRequest = fc.oneof(
  { weight: 6, arbitrary: openRequest },
  { weight: 1, arbitrary: authRequest },
);

// ---- sending --------------------------------------------------------------------------------

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  readonly error?: string;
}

function baseOf(target: FuzzRequest['target']): URL {
  return new URL(target === 'open' ? open.url : auth.url);
}

function send(request: FuzzRequest, agents: Record<string, http.Agent>): Promise<Answer> {
  const base = baseOf(request.target);
  if (request.raw !== undefined) return sendRaw(Number(base.port), request.raw);
  return new Promise((resolve) => {
    let outgoing: http.ClientRequest;
    try {
      outgoing = http.request(
        {
          host: base.hostname,
          port: base.port,
          method: request.method,
          // Whatever the generator made, sent as bytes the client accepts (the rest is encoded).
          path: pathSafe(request.path),
          headers: request.headers,
          agent: agents[request.target],
          timeout: REQUEST_TIMEOUT_MS,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          response.on('error', (error) =>
            resolve({ status: 0, headers: {}, body: '', error: String(error) }),
          );
        },
      );
    } catch (error) {
      resolve({ status: -1, headers: {}, body: '', error: `client refused: ${String(error)}` });
      return;
    }
    outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
    outgoing.on('error', (error) =>
      resolve({ status: 0, headers: {}, body: '', error: String(error) }),
    );
    outgoing.end(request.body === undefined ? undefined : Buffer.from(request.body, 'latin1'));
  });
}

function sendRaw(port: number, raw: string): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy());
    socket.on('connect', () => socket.write(Buffer.from(raw, 'utf8')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const headers: http.IncomingHttpHeaders = {};
      for (const line of head.split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        status: Number(head.split(' ')[1] ?? 0),
        headers,
        body: rest.join('\r\n\r\n'),
        ...(text === '' ? { error: 'closed without an answer' } : {}),
      });
    });
  });
}

// ---- checks ---------------------------------------------------------------------------------

/** What is wrong with one answer, or null. */
function problem(request: FuzzRequest, answer: Answer): string | null {
  if (answer.status === -1) return answer.error ?? 'client refused';
  if (answer.status === 0) {
    // Chunked JSON cut short would show here; so would a server that hangs up.
    return `no answer: ${answer.error}`;
  }
  if (answer.status >= 500) return `status ${answer.status}: ${answer.body.slice(0, 200)}`;
  for (const text of FORBIDDEN_IN_ANSWERS) {
    if (answer.body.includes(text)) return `answer contains ${JSON.stringify(text)}`;
  }
  if (answer.status >= 400 && request.method !== 'HEAD') {
    const type = String(answer.headers['content-type'] ?? '');
    if (!type.startsWith('application/json')) return `error with content-type '${type}'`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body);
    } catch {
      return `error body is not JSON: ${answer.body.slice(0, 100)}`;
    }
    const error = parsed as { success?: unknown; message?: unknown; code?: unknown };
    if (
      error.success !== false ||
      typeof error.message !== 'string' ||
      typeof error.code !== 'string'
    ) {
      return `error body is not {success:false, message, code}: ${answer.body.slice(0, 200)}`;
    }
  }
  return null;
}

async function tableState() {
  const [tables] = await db.admin.query<RowDataPacket[]>('SHOW FULL TABLES');
  const [counts] = await db.admin.query<RowDataPacket[]>(
    `SELECT (SELECT COUNT(*) FROM people) AS people, (SELECT COUNT(*) FROM \`order\`) AS \`order\`,
            (SELECT COUNT(*) FROM canary) AS canary`,
  );
  const [checksum] = await db.admin.query<RowDataPacket[]>('CHECKSUM TABLE canary');
  return {
    tables: tables.map((row) => Object.values(row).join(' ')).sort(),
    counts: counts[0] as Record<string, number>,
    canary: String(checksum[0]?.Checksum),
  };
}

test(`${REQUESTS} random requests: no 5xx, JSON errors only, every table intact`, async () => {
  const requests = fc.sample(fuzzRequest, { seed: SEED, numRuns: REQUESTS });
  const before = await tableState();
  const agents = {
    open: new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY }),
    auth: new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY }),
  };
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  const delta: Record<string, number> = { people: 0, order: 0, users: 0 };
  let next = 0;
  const started = Date.now();
  const worker = async () => {
    while (next < requests.length) {
      const request = requests[next++] as FuzzRequest;
      const answer = await send(request, agents);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const found = problem(request, answer);
      if (found) problems.push(`${request.method} ${request.path.slice(0, 200)} → ${found}`);
      if (answer.status === 200 && request.effect && request.method !== 'HEAD') {
        const { kind, table } = request.effect;
        if (kind === 'register') delta.users = (delta.users ?? 0) + 1;
        const base = Object.hasOwn(WRITE_TARGET, table) ? WRITE_TARGET[table] : undefined;
        const affected = Number(
          (JSON.parse(answer.body) as { affectedRows?: number }).affectedRows,
        );
        if (base && (kind === 'create' || kind === 'delete')) {
          delta[base] = (delta[base] ?? 0) + (kind === 'create' ? affected : -affected);
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    agents.open.destroy();
    agents.auth.destroy();
  }
  const seconds = (Date.now() - started) / 1000;
  const after = await tableState();
  const [users] = await db.admin.query<RowDataPacket[]>(
    'SELECT COUNT(*) AS n FROM users_created_by_tablegate',
  );
  const report = `http fuzz (seed ${SEED}, replay with FUZZ_SEED=${SEED}): ${REQUESTS} requests in ${seconds.toFixed(1)} s; statuses ${[
    ...statuses,
  ]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s} × ${n}`)
    .join(
      ', ',
    )}; rows: people ${before.counts.people} → ${after.counts.people}, order ${before.counts.order} → ${after.counts.order}, users ${users[0]?.n}`;
  console.log(report);

  expect({ seed: SEED, problems: problems.slice(0, 20), count: problems.length }).toEqual({
    seed: SEED,
    problems: [],
    count: 0,
  });
  expect(after.tables).toEqual(before.tables);
  expect(after.canary).toBe(before.canary);
  expect(Number(after.counts.canary)).toBe(Number(before.counts.canary));
  expect(Number(after.counts.people)).toBe(Number(before.counts.people) + (delta.people ?? 0));
  expect(Number(after.counts.order)).toBe(Number(before.counts.order) + (delta.order ?? 0));
  expect(Number(users[0]?.n)).toBe(delta.users);
  // Still serving.
  expect((await fetch(`${open.url}/health`)).status).toBe(200);
  expect((await fetch(`${auth.url}/health`)).status).toBe(200);
}, 120_000);
