/**
 * CORS (`--cors-origin`, docs/configuration.md): browsers may call every endpoint, read the
 * headers that carry meaning (X-Total-Count, Link, Retry-After, WWW-Authenticate, ETag,
 * Location, OData-EntityId, OData-Version, Preference-Applied), and get CORS headers on a 401 too.
 */
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let db: TestDatabase;
let open: TestGateway;
let guarded: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(
    'CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1); CREATE TABLE u (id INT PRIMARY KEY)',
  );
  open = await startTestGateway(db.name);
  guarded = await startTestGateway(db.name, {
    mode: 'auth',
    corsOrigin: 'https://app.example, https://admin.example',
    jwtSecret: 'x'.repeat(32),
  });
});
afterAll(async () => {
  await open.close();
  await guarded.close();
  await db.drop();
});

test('a preflight for a PUT with JSON is allowed', async () => {
  const response = await fetch(`${open.url}/table/t/update(id,1)`, {
    method: 'OPTIONS',
    headers: {
      Origin: 'https://anywhere.example',
      'Access-Control-Request-Method': 'PUT',
      'Access-Control-Request-Headers': 'content-type, authorization',
    },
  });
  expect(response.status).toBe(204);
  expect(response.headers.get('access-control-allow-origin')).toBe('*');
  expect(response.headers.get('access-control-allow-methods')).toBe(
    'GET, HEAD, POST, PUT, PATCH, DELETE',
  );
  expect(response.headers.get('access-control-allow-headers')).toBe('content-type, authorization');
});

test('X-Total-Count and Link are exposed to scripts', async () => {
  const response = await fetch(`${open.url}/table/t/read?$count=true`, {
    headers: { Origin: 'https://anywhere.example' },
  });
  expect(response.headers.get('access-control-allow-origin')).toBe('*');
  expect(response.headers.get('access-control-expose-headers')).toBe(
    'X-Total-Count, Link, Retry-After, WWW-Authenticate, ETag, Location, OData-EntityId, OData-Version, Preference-Applied',
  );
  expect(response.headers.get('x-total-count')).toBe('1');
});

test('a listed origin is echoed, an unlisted one is not, and a 401 carries CORS headers', async () => {
  const listed = await fetch(`${guarded.url}/table/t/read`, {
    headers: { Origin: 'https://admin.example' },
  });
  expect(listed.status).toBe(401);
  expect(listed.headers.get('access-control-allow-origin')).toBe('https://admin.example');
  const unlisted = await fetch(`${guarded.url}/table/t/read`, {
    headers: { Origin: 'https://evil.example' },
  });
  expect(unlisted.status).toBe(401);
  expect(unlisted.headers.get('access-control-allow-origin')).toBeNull();
});

test('a preflight needs no token in auth mode', async () => {
  const response = await fetch(`${guarded.url}/table/t/read`, {
    method: 'OPTIONS',
    headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' },
  });
  expect(response.status).toBe(204);
  expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
});

test('a script may read the ETag of a read, and where OData created an entity and how', async () => {
  const origin = { Origin: 'https://anywhere.example' };
  const read = await fetch(`${open.url}/table/t/read`, { headers: origin });
  const created = await fetch(`${open.url}/odata/u`, {
    method: 'POST',
    headers: { ...origin, 'Content-Type': 'application/json', Prefer: 'return=minimal' },
    body: JSON.stringify({ id: 7 }),
  });
  expect([read.status, created.status]).toEqual([200, 204]);
  const sent = [
    [read, ['ETag']],
    [created, ['Location', 'OData-EntityId', 'OData-Version', 'Preference-Applied']],
  ] as const;
  for (const [response, names] of sent) {
    const exposed = (response.headers.get('access-control-expose-headers') ?? '').split(', ');
    for (const name of names) {
      expect(response.headers.get(name)).not.toBeNull();
      expect(exposed).toContain(name);
    }
  }
  expect(created.headers.get('location')).toBe(`${open.url}/odata/u(7)`);
});
