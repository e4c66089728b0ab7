/**
 * Who may call a stored routine (docs/routines.md, docs/policies.md): a policy's `routines`
 * grants per role, a routine not granted answering exactly as one that does not exist, the API
 * description per role, `anonymous` in auth and open mode, the start-up check of the names, and
 * without a policy the callers who may write tables.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StartupError } from '../../src/main.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { signUpAs, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURE = `
CREATE TABLE prices (id INT PRIMARY KEY, amount DECIMAL(10,2) NOT NULL);
INSERT INTO prices VALUES (1, 9.90);
CREATE FUNCTION public_price(p INT) RETURNS DECIMAL(10,2) READS SQL DATA
  RETURN (SELECT amount FROM prices WHERE id = p);
CREATE PROCEDURE raise_prices(IN by_amount DECIMAL(10,2))
  BEGIN UPDATE prices SET amount = amount + by_amount; SELECT amount FROM prices ORDER BY id; END;
CREATE PROCEDURE admin_only() BEGIN SELECT 'secret' AS s; END;
`;

const POLICY = {
  roles: {
    anonymous: { routines: { public_price: true } },
    user: { tables: { prices: { read: true } }, routines: { '*': true, admin_only: false } },
    reader: { tables: { prices: { read: true } } },
    admin: { routines: { '*': true } },
  },
};

const SECRET = 'rpc-policy-test-secret-0123456789abcdefghijkl';
const PASSWORD = 'correct horse battery';

interface Answer {
  status: number;
  type: string | null;
  text: string;
}

async function call(
  base: string,
  method: string,
  url: string,
  token?: string,
  body?: unknown,
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${url}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  };
}

let db: TestDatabase;
let dir: string;
let gw: TestGateway;
const tokens: Record<string, string> = {};

async function policyFile(policy: unknown): Promise<string> {
  const file = path.join(dir, `${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify(policy));
  return file;
}

async function signUp(base: string, name: string, role: string): Promise<string> {
  const email = `${name}@rpc.example`;
  return (await signUpAs(base, db.admin, { email, password: PASSWORD }, role)).token;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-rpc-policy-'));
  db = await createTestDatabase(FIXTURE);
  gw = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: SECRET,
    policyFile: await policyFile(POLICY),
  });
  for (const role of ['user', 'reader', 'admin']) tokens[role] = await signUp(gw.url, role, role);
});

afterAll(async () => {
  await gw?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

const MISSING = (name: string) =>
  JSON.stringify({
    success: false,
    message: `Routine '${name}' does not exist`,
    code: 'UNKNOWN_ROUTINE',
  });

describe('granted per role', () => {
  test('a granted routine answers; the policy does not reach into it', async () => {
    const answer = await call(gw.url, 'POST', '/rpc/raise_prices', tokens.user, { by_amount: 1 });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({
      success: true,
      results: [[{ amount: 10.9 }]],
      out: {},
    });
    expect((await call(gw.url, 'POST', '/rpc/admin_only', tokens.admin)).status).toBe(200);
  });

  test.each([
    ['user', 'POST', '/rpc/admin_only', 'admin_only'],
    ['reader', 'POST', '/rpc/raise_prices', 'raise_prices'],
    ['reader', 'GET', '/rpc/public_price?p=1', 'public_price'],
    ['admin', 'GET', '/rpc/no_such?p=1', 'no_such'],
  ])(
    '%s: %s %s is 404, byte for byte as a routine that does not exist',
    async (role, method, url, name) => {
      const refused = await call(
        gw.url,
        method,
        url,
        tokens[role],
        method === 'POST' ? {} : undefined,
      );
      const missing = await call(gw.url, method, url.replace(name, 'no_such'), tokens[role]);
      expect(refused).toEqual({
        status: 404,
        type: 'application/json; charset=utf-8',
        text: MISSING(name),
      });
      expect(missing).toEqual({ ...refused, text: MISSING('no_such') });
    },
  );

  test('a refused POST is answered before its body is read: a broken body changes nothing', async () => {
    const response = await fetch(`${gw.url}/rpc/admin_only`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.user}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(response.status).toBe(404);
    expect(await response.text()).toBe(MISSING('admin_only'));
  });
});

describe('anonymous', () => {
  test('a routine granted to anonymous needs no token', async () => {
    const answer = await call(gw.url, 'GET', '/rpc/public_price?p=1');
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^\{"success":true,"value":\d+\.\d\d\}$/);
  });

  test('any other routine without a token is 401, as for any other request', async () => {
    for (const url of ['/rpc/raise_prices', '/rpc/no_such']) {
      const answer = await call(gw.url, 'POST', url, undefined, {});
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.text)).toEqual({
        success: false,
        message: 'Access Denied',
        code: 'ACCESS_DENIED',
      });
    }
  });
});

describe('the API description per role', () => {
  const rpcPaths = async (token?: string) => {
    const answer = await call(gw.url, 'GET', '/openapi.json', token);
    const document = JSON.parse(answer.text) as { paths: Record<string, Record<string, unknown>> };
    return Object.entries(document.paths)
      .filter(([p]) => p.startsWith('/rpc/'))
      .map(([p, item]) => `${Object.keys(item).join('+')} ${p}`);
  };

  test('each role sees the routines it may call, and only those', async () => {
    expect(await rpcPaths(tokens.user)).toEqual([
      'get+post /rpc/public_price',
      'post /rpc/raise_prices',
    ]);
    expect(await rpcPaths(tokens.admin)).toEqual([
      'post /rpc/admin_only',
      'get+post /rpc/public_price',
      'post /rpc/raise_prices',
    ]);
    expect(await rpcPaths(tokens.reader)).toEqual([]);
    expect(await rpcPaths()).toEqual(['get+post /rpc/public_price']);
  });
});

describe('the "did you mean" of an unknown routine names only routines the role may call', () => {
  const meant = (name: string, served: string) =>
    JSON.stringify({
      success: false,
      message: `Routine '${name}' does not exist: did you mean '${served}'?`,
      code: 'UNKNOWN_ROUTINE',
    });
  test.each([
    ['admin', 'POST', '/rpc/admin_onl', meant('admin_onl', 'admin_only')],
    ['user', 'POST', '/rpc/admin_onl', MISSING('admin_onl')],
    ['user', 'POST', '/rpc/raise_price', meant('raise_price', 'raise_prices')],
    ['reader', 'POST', '/rpc/raise_price', MISSING('raise_price')],
    ['reader', 'GET', '/rpc/public_prise?p=1', MISSING('public_prise')],
    ['user', 'GET', '/rpc/public_prise?p=1', meant('public_prise', 'public_price')],
  ])('%s: %s %s', async (role, method, url, text) => {
    const answer = await call(
      gw.url,
      method,
      url,
      tokens[role],
      method === 'POST' ? {} : undefined,
    );
    expect(answer).toEqual({ status: 404, type: 'application/json; charset=utf-8', text });
  });
});

describe('the policy file', () => {
  test('a routine it names that does not exist stops the start (exit 2), naming it', async () => {
    const file = await policyFile({ roles: { user: { routines: { missing_routine: true } } } });
    const started = startTestGateway(db.name, {
      mode: 'auth',
      jwtSecret: SECRET,
      policyFile: file,
    });
    await expect(started).rejects.toEqual(
      new StartupError(
        `policy ${file}: roles.user.routines.missing_routine: routine 'missing_routine' does not exist`,
        2,
      ),
    );
    await expect(started).rejects.toMatchObject({ exitCode: 2 });
  });

  test('open mode: the anonymous role applies to every request', async () => {
    const open = await startTestGateway(db.name, { policyFile: await policyFile(POLICY) });
    try {
      expect((await call(open.url, 'GET', '/rpc/public_price?p=1')).status).toBe(200);
      const refused = await call(open.url, 'POST', '/rpc/raise_prices', undefined, {
        by_amount: 1,
      });
      expect(refused).toEqual({
        status: 404,
        type: 'application/json; charset=utf-8',
        text: MISSING('raise_prices'),
      });
    } finally {
      await open.close();
    }
  });
});

describe('without a policy: the callers who may write tables', () => {
  test('auth mode: every signed-in user, nobody without a token', async () => {
    const plain = await startTestGateway(db.name, { mode: 'auth', jwtSecret: SECRET });
    try {
      expect((await call(plain.url, 'POST', '/rpc/admin_only')).status).toBe(401);
      expect((await call(plain.url, 'GET', '/rpc/public_price?p=1')).status).toBe(401);
      // The same secret and users table: the tokens of the first gateway work here too.
      expect((await call(plain.url, 'POST', '/rpc/admin_only', tokens.reader)).status).toBe(200);
    } finally {
      await plain.close();
    }
  });

  test('open mode: anyone', async () => {
    const open = await startTestGateway(db.name);
    try {
      expect((await call(open.url, 'POST', '/rpc/admin_only')).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});
