/**
 * `GET /openapi.json` and `GET /docs` on the real gateway (docs/openapi.md, docs/auth.md): in auth
 * mode the description needs a token and the Swagger UI page and its assets do not; the description
 * is valid OpenAPI 3.1, follows a table created after start, and real rows of every MySQL type
 * match the row schemas it gives. In open mode nothing needs a token and no scheme is described.
 */
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURE = `
CREATE TABLE every_type (
  id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
  tiny TINYINT NULL,
  big BIGINT NULL,
  price DECIMAL(10, 2) NOT NULL,
  ratio DOUBLE NULL,
  born YEAR NULL,
  flags BIT(8) NULL,
  day DATE NULL,
  at DATETIME(6) NULL,
  stamp TIMESTAMP NULL DEFAULT NULL,
  label VARCHAR(20) NULL,
  body TEXT NULL,
  at_time TIME NULL,
  status ENUM('new', 'it''s') NULL,
  tags SET('a', 'b') NULL,
  data JSON NULL,
  raw VARBINARY(16) NULL,
  total DECIMAL(12, 2) AS (price * 2) VIRTUAL
);
INSERT INTO every_type (tiny, big, price, ratio, born, flags, day, at, stamp, label, body, at_time, status, tags, data, raw)
VALUES
  (-128, 9007199254740993, 12.50, 1.5, 2024, b'101', '2024-02-29', '2024-02-29 23:59:59.123456',
   '2024-01-01 00:00:00', 'Zürich', 'text', '-838:59:59', 'it''s', 'a,b', '{"a": [1, null]}', x'00ff'),
  (NULL, NULL, 0.00, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
CREATE VIEW cheap AS SELECT id, price FROM every_type WHERE price < 10;
`;
const SECRET = 'docs-integration-secret-0123456789abcdefghij';
const PASSWORD = 'docs test password';

let db: TestDatabase;
let auth: TestGateway;
let open: TestGateway;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  auth = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET });
  open = await startTestGateway(db.name);
  const body = JSON.stringify({ email: 'docs@example.com', password: PASSWORD });
  const headers = { 'content-type': 'application/json' };
  await fetch(`${auth.url}/auth/register`, { method: 'POST', headers, body });
  const login = await fetch(`${auth.url}/auth/login`, { method: 'POST', headers, body });
  token = ((await login.json()) as { token: string }).token;
});
afterAll(async () => {
  await auth?.close();
  await open?.close();
  await db?.drop();
});

const withToken = () => ({ headers: { authorization: `Bearer ${token}` } });

const VERSION = JSON.parse(readFileSync('package.json', 'utf8')).version as string;
const INDEX = {
  name: 'tablegate',
  version: VERSION,
  links: { docs: '/docs', openapi: '/openapi.json', health: '/health' },
};

async function description(base: string, init: RequestInit = {}) {
  const response = await fetch(`${base}/openapi.json`, init);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return (await response.json()) as {
    paths: Record<string, unknown>;
    components: { schemas: Record<string, unknown>; securitySchemes?: unknown };
    security?: unknown;
  };
}

describe('auth mode', () => {
  test('/openapi.json without a token: 401 Access Denied', async () => {
    const response = await fetch(`${auth.url}/openapi.json`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(await response.json()).toEqual({
      success: false,
      message: 'Access Denied',
      code: 'ACCESS_DENIED',
    });
  });

  test.each([
    '/docs',
    '/docs/',
    '/docs/static/swagger-ui.css',
    '/docs/static/swagger-ui-bundle.js',
    '/docs/static/swagger-initializer.js',
  ])('%s needs no token: 200', async (url) => {
    const response = await fetch(`${auth.url}${url}`);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  });

  test('/docs is the Swagger UI page, and names no table before a token', async () => {
    const html = await (await fetch(`${auth.url}/docs`)).text();
    expect(html).toContain('swagger-ui-bundle.js');
    const init = await (await fetch(`${auth.url}/docs/static/swagger-initializer.js`)).text();
    expect(init).toContain('/auth/login');
    expect(init).not.toContain('every_type');
    // Nor the database's name: it is nobody's business.
    expect(init).not.toContain(db.name);
    expect(html).not.toContain(db.name);
  });

  test('the docs pages cannot be framed by another site', async () => {
    for (const url of ['/docs', '/docs/', '/docs/static/index.html']) {
      const response = await fetch(`${auth.url}${url}`);
      await response.arrayBuffer();
      expect(response.headers.get('content-security-policy')).toBe(
        "frame-ancestors 'none'; object-src 'none'; base-uri 'self'",
      );
      expect(response.headers.get('x-frame-options')).toBe('DENY');
    }
  });

  test('every answer, JSON or not, says X-Content-Type-Options: nosniff', async () => {
    for (const url of ['/health', '/openapi.json', '/nothing', '/docs', '/table/cheap/read']) {
      const response = await fetch(`${auth.url}${url}`, withToken());
      await response.arrayBuffer();
      expect([url, response.headers.get('x-content-type-options')]).toEqual([url, 'nosniff']);
    }
    const denied = await fetch(`${auth.url}/table/cheap/read`);
    expect(denied.status).toBe(401);
    expect(denied.headers.get('x-content-type-options')).toBe('nosniff');
  });

  // The headers are set as a request comes in (and by sendError for one refused before that):
  // answers that never reach a handler carry them too.
  test.each<[string, string, RequestInit, number]>([
    ['a malformed percent-encoding in the path', '/table/%zz/read', {}, 400],
    [
      'a body that is not JSON',
      '/auth/login',
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' },
      400,
    ],
    [
      'a body of another type',
      '/auth/login',
      { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' },
      400,
    ],
    [
      'a CORS preflight',
      '/table/cheap/read',
      {
        method: 'OPTIONS',
        headers: { origin: 'https://a.example', 'access-control-request-method': 'GET' },
      },
      204,
    ],
    ['HEAD', '/health', { method: 'HEAD' }, 200],
    ['an unknown docs page', '/docs/static/nothing.js', {}, 404],
  ])('%s: nosniff too', async (_label, url, init, status) => {
    const response = await fetch(`${auth.url}${url}`, init);
    await response.arrayBuffer();
    expect([response.status, response.headers.get('x-content-type-options')]).toEqual([
      status,
      'nosniff',
    ]);
  });

  test('a docs URL refused before routing still cannot be framed', async () => {
    const response = await fetch(`${auth.url}/docs/%zz`);
    await response.arrayBuffer();
    expect(response.status).toBe(400);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  });

  test.each(['/docs/json', '/docs/yaml', '/docs/static/../json', '/docs/nothing'])(
    '%s is not public: 401',
    async (url) => {
      const response = await fetch(`${auth.url}${url}`);
      expect(response.status).toBe(401);
    },
  );

  test('with a token: a valid OpenAPI 3.1 document with the Bearer scheme', async () => {
    const doc = await description(auth.url, withToken());
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.components.securitySchemes).toHaveProperty('bearerAuth');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/auth/login',
        '/table/every_type/read',
        '/table/cheap/read',
        '/upload',
        '/health',
      ]),
    );
    expect(Object.keys(doc.paths).join()).not.toContain('users_created_by_tablegate');
    // /docs/json is the same live description.
    const json = await fetch(`${auth.url}/docs/json`, withToken());
    expect(await json.json()).toEqual(doc);
  });

  test('real rows of every type match the row schema', async () => {
    const doc = await description(auth.url, withToken());
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
    ajv.addSchema(doc, 'doc');
    const validate = ajv.compile({
      type: 'array',
      items: { $ref: 'doc#/components/schemas/every_type' },
    });
    const rows = await (
      await fetch(`${auth.url}/table/every_type/read?$orderby=id`, withToken())
    ).json();
    expect(rows).toHaveLength(2);
    const valid = validate(rows);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    // And a value of the wrong type does not.
    expect(validate([{ ...(rows as object[])[0], price: '12.50' }])).toBe(false);
  });

  test('GET / needs a token (docs/auth.md); with one it is the index, naming no database', async () => {
    const denied = await fetch(`${auth.url}/`);
    expect(denied.status).toBe(401);
    expect(await denied.json()).toEqual({
      success: false,
      message: 'Access Denied',
      code: 'ACCESS_DENIED',
    });
    const response = await fetch(`${auth.url}/`, withToken());
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual(INDEX);
    expect(text).not.toContain(db.name);
    expect(text).not.toContain('every_type');
    const doc = await description(auth.url, withToken());
    expect(doc.paths).toHaveProperty(['/', 'get', 'responses', '401']);
  });

  test('a table created after start appears once the schema is re-read', async () => {
    await db.admin.query('CREATE TABLE later (id INT PRIMARY KEY)');
    const doc = await description(auth.url, withToken());
    expect(doc.paths).toHaveProperty(['/table/later/read']);
  });
});

describe('open mode', () => {
  test('/openapi.json needs no token and describes no scheme and no /auth', async () => {
    const doc = await description(open.url);
    expect(doc.security).toBeUndefined();
    expect(doc.components.securitySchemes).toBeUndefined();
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/auth'))).toBe(false);
    expect(doc.paths).toHaveProperty(['/table/every_type/create']);
  });

  test('GET / is the index, and the description has it', async () => {
    const response = await fetch(`${open.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(INDEX);
    const doc = await description(open.url);
    expect(doc.paths).toHaveProperty(['/', 'get', 'responses', '200']);
    expect(doc.components.schemas).toHaveProperty('Index');
  });

  test('/docs: 200', async () => {
    expect((await fetch(`${open.url}/docs`)).status).toBe(200);
  });
});
