/**
 * Every route of the real gateway with what it declares it is (http/route-gate.ts): the auth
 * guard lets exactly the `public` ones through without a token (docs/auth.md), and the policy
 * gate asks Policy.decide by the rest (docs/policies.md). A new route must appear here.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase('CREATE TABLE items (id INT PRIMARY KEY)');
  gw = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: 'route-gates-secret-0123456789abcdef',
  });
});

afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

const PUBLIC = { kind: 'public' };
const SIGNED_IN = { kind: 'signed-in' };
const DESCRIPTION = { kind: 'description' };
const both = (url: string, gate: unknown) => [
  [`GET ${url}`, gate],
  [`HEAD ${url}`, gate],
];

test('each route declares its gate; the public ones are those docs/auth.md names', () => {
  const listed = gw.gateway.app.routeGates.list().map(({ route, gate }) => [route, gate]);
  expect(new Map(listed as [string, unknown][])).toEqual(
    new Map([
      ['OPTIONS *', SIGNED_IN],
      ['POST /auth/register', PUBLIC],
      ['POST /auth/login', PUBLIC],
      ...both('/auth/me', SIGNED_IN),
      ['POST /auth/password', SIGNED_IN],
      ...both('/live', PUBLIC),
      ...both('/health', PUBLIC),
      ...both('/table/:table/read', { kind: 'table', action: 'read' }),
      ...both('/table/:table/:action', { kind: 'table', action: 'read' }),
      ...both('/table/:table/changes', { kind: 'table', action: 'read' }),
      ['POST /mcp', { kind: 'mcp' }],
      ['POST /table/:table/:action', { kind: 'table', action: 'create' }],
      ['PUT /table/:table/:action', { kind: 'table', action: 'update' }],
      ['DELETE /table/:table/:action', { kind: 'table', action: 'delete' }],
      ['POST /rpc/:name', { kind: 'routine' }],
      ...both('/rpc/:name', { kind: 'routine' }),
      ...['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD'].flatMap((method) => [
        [`${method} /odata`, { kind: 'odata' }],
        [`${method} /odata/*`, { kind: 'odata' }],
      ]),
      ['POST /odata/$batch', { kind: 'odata' }],
      ['POST /upload', { kind: 'files', action: 'upload' }],
      ...both('/@/*', { kind: 'files', action: 'download' }),
      ...both('/openapi.json', DESCRIPTION),
      // `GET /docs` is the plugin's `/docs/` route under a second path: its HEAD is listed alone.
      ['HEAD /docs', PUBLIC],
      ...both('/docs/', PUBLIC),
      ...both('/docs/static/index.html', PUBLIC),
      ...both('/docs/static/swagger-initializer.js', PUBLIC),
      ...both('/docs/json', DESCRIPTION),
      ...both('/docs/yaml', DESCRIPTION),
      ...both('/docs/static/*', PUBLIC),
      ...both('/', SIGNED_IN),
    ] as [string, unknown][]),
  );
});

test('without a token: the docs page both ways and its assets answer; the description copies do not', async () => {
  const status = async (path: string) => (await fetch(`${gw.url}${path}`)).status;
  // Fastify serves the plugin's `/docs/` route for `/docs` too, with the same options.
  expect(await status('/docs')).toBe(200);
  expect(await status('/docs/')).toBe(200);
  expect(await status('/docs/static/swagger-initializer.js')).toBe(200);
  expect(await status('/docs/json')).toBe(401);
  expect(await status('/openapi.json')).toBe(401);
  expect(await status('/')).toBe(401);
  expect(await status('/health')).toBe(200);
});
