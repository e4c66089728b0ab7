/**
 * The API description of a real schema (every type family, odd names, relations, views MySQL can
 * and cannot write, a stored procedure and a function), in open and in auth mode: Redocly's
 * recommended ruleset finds no error in it, and real answers of the gateway — rows of every type,
 * GeoJSON, errors, write results — are valid against the response schema the description gives
 * for their operation and status (JSON Schema 2020-12, as OpenAPI 3.1 uses it, checked with Ajv).
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { getHttpOperationsFromSpec } from '@stoplight/prism-http';
import { createClientFromOperations } from '@stoplight/prism-http/dist/client.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import pino from 'pino';
import { EVERY_TYPE_SQL } from '../fixtures/every-type.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { postCredentials, startTestGateway, type TestGateway } from '../helpers/gateway.js';

type Json = Record<string, unknown>;

/** Routines of odd names beside the tables: a procedure (two result sets, an OUT) and a function. */
const ROUTINES_SQL = `
CREATE PROCEDURE \`list parents\`(IN lo INT, OUT n INT)
  BEGIN SELECT id, name FROM parents WHERE id >= lo ORDER BY id; SELECT COUNT(*) INTO n FROM parents; END;
CREATE FUNCTION \`größe plus\`(n INT) RETURNS INT DETERMINISTIC RETURN n + 1;
`;

let db: TestDatabase;
let open: TestGateway;
let auth: TestGateway;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase(EVERY_TYPE_SQL + ROUTINES_SQL);
  open = await startTestGateway(db.name);
  auth = await startTestGateway(db.name, { mode: 'auth', jwtSecret: 'x'.repeat(40) });
  await postCredentials(auth.url, '/auth/register', 'ada@example.com', 'correct horse battery');
  const login = await postCredentials(
    auth.url,
    '/auth/login',
    'ada@example.com',
    'correct horse battery',
  );
  token = (login.body as { token: string }).token;
});
afterAll(async () => {
  await open?.close();
  await auth?.close();
  await db?.drop();
});

async function description(gateway: TestGateway, bearer?: string): Promise<Json> {
  const response = await fetch(`${gateway.url}/openapi.json`, {
    headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

describe("Redocly's recommended ruleset", () => {
  test.each(['open', 'auth'])('finds no error in the %s mode description', async (mode) => {
    const document = mode === 'open' ? await description(open) : await description(auth, token);
    const problems = await lintFromString({
      source: JSON.stringify(document),
      absoluteRef: `${mode}.json`,
      config: await createConfig({ extends: ['recommended'] }),
    });
    const errors = problems
      .filter((problem) => problem.severity === 'error')
      .map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  });
});

/** One request through Prism, and what it found: the status and the violations in and out. */
interface Checked {
  readonly request: string;
  readonly status: number;
  /** What Prism finds wrong with the request, as the description has it. */
  readonly requestViolations: string[];
  /** What Prism finds wrong with the gateway's answer: always nothing. */
  readonly answerViolations: string[];
}

type Method = 'get' | 'post' | 'put' | 'delete';

/**
 * Stoplight Prism as its validation proxy runs (`prism proxy --errors=false`): each request is
 * checked against the description, forwarded to the gateway, and its answer checked against the
 * response the description gives for that status and media type. Requests carry `bearer`; the
 * description is the one `describedFor` is shown.
 */
async function prismProxy(gateway: TestGateway, bearer?: string, describedFor = bearer) {
  const operations = await getHttpOperationsFromSpec(await description(gateway, describedFor));
  const logger = Object.assign(pino({ level: 'silent' }), { success: () => {} });
  const client = createClientFromOperations(operations, {
    isProxy: true,
    upstream: new URL(gateway.url),
    upstreamProxy: undefined,
    mock: { dynamic: false },
    checkSecurity: true,
    validateRequest: true,
    validateResponse: true,
    errors: false,
    logger,
  } as unknown as Parameters<typeof createClientFromOperations>[1]);
  const text = (violations: { path?: string[]; message: string }[]) =>
    violations.map((v) => `${v.path?.join('.') ?? ''}: ${v.message}`);
  return async (method: Method, path: string, body?: unknown): Promise<Checked> => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const answer = await client.request(path, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    return {
      request: `${method.toUpperCase()} ${path}`,
      status: answer.status,
      requestViolations: text(answer.violations.input),
      answerViolations: text(answer.violations.output),
    };
  };
}

describe('Prism validates live answers against the description: no violation', () => {
  const q = encodeURIComponent;
  type Case = readonly [status: number, method: Method, path: string, body?: unknown];

  /**
   * Each request gets its status and an answer Prism finds nothing wrong with; `valid` requests
   * are valid by the description too (the others break what only the gateway can check, or what
   * Prism names in `requestViolations`).
   */
  const expectClean = async (
    send: Awaited<ReturnType<typeof prismProxy>>,
    cases: readonly Case[],
    { valid }: { valid: boolean },
  ) => {
    const results: Checked[] = [];
    for (const [, method, path, body] of cases) results.push(await send(method, path, body));
    expect(results.map((r) => (valid ? r : { ...r, requestViolations: [] }))).toEqual(
      cases.map(([status, method, path]) => ({
        request: `${method.toUpperCase()} ${path}`,
        status,
        requestViolations: [],
        answerViolations: [],
      })),
    );
  };

  test('reads, key reads, $count, $expand, views', async () => {
    const cases: Case[] = [
      [200, 'get', '/table/types/read'],
      [200, 'get', `/table/types/read?$select=id,pt,gc&$filter=${q('id eq 1')}`],
      [200, 'get', '/table/odd%20names/read'],
      [200, 'get', '/table/parents/read?$count=true&$top=1&$orderby=id'],
      [200, 'get', `/table/parents/read?$expand=${q('types($select=id,i_int)')}`],
      [200, 'get', '/table/types/read(id,1)'],
      [200, 'get', '/table/odd%20names/read(id,2)?$expand=parent'],
      [200, 'get', '/table/type_counts/read'],
      [200, 'get', '/table/both_names/read'],
    ];
    await expectClean(await prismProxy(open), cases, { valid: true });
  });

  test('$apply: groupby and aggregate, paths, an alias named like a column, computed rows', async () => {
    const cases: Case[] = [
      [
        200,
        'get',
        `/table/types/read?$apply=${q('groupby((parent_id),aggregate(i_int with average as avg,$count as n))')}`,
      ],
      [
        200,
        'get',
        `/table/types/read?$apply=${q('groupby((parent/name),aggregate(d with sum as d,dt with max as latest))')}&$count=true`,
      ],
      [200, 'get', `/table/types/read?$apply=${q('aggregate(i_big with sum as total)')}`],
      [200, 'get', `/table/parents/read?$apply=${q('compute(length(name) as len)')}`],
      [200, 'get', `/table/odd%20names/read?$apply=${q('groupby(("zip code"))')}`],
    ];
    await expectClean(await prismProxy(open), cases, { valid: true });
  });

  test('writes and routines', async () => {
    const cases: Case[] = [
      [200, 'post', '/table/parents/create', { id: 9, name: 'nine' }],
      [
        200,
        'post',
        '/table/parents/create',
        [
          { id: 10, name: 'ten' },
          { id: 11, name: null },
        ],
      ],
      [200, 'put', '/table/parents/update(id,9)', { name: 'nein' }],
      [200, 'put', `/table/parents/update?$filter=${q('id ge 10')}`, { name: 'many' }],
      [200, 'delete', '/table/parents/delete(id,9)'],
      [200, 'delete', `/table/parents/delete?$filter=${q('id ge 10')}`],
      [200, 'post', `/rpc/${q('list parents')}`, { lo: 1 }],
      [200, 'get', `/rpc/${q('größe plus')}?n=4`],
      [200, 'post', `/rpc/${q('größe plus')}`, { n: 4 }],
      [200, 'get', '/health'],
    ];
    await expectClean(await prismProxy(open), cases, { valid: true });
  });

  test('errors', async () => {
    const cases: Case[] = [
      [400, 'get', `/table/types/read?$filter=${q("d gt 'abc'")}`],
      [400, 'get', '/table/types/read?$select=nope'],
      [400, 'get', `/table/types/read?$apply=${q('aggregate(vc with sum as s)')}`],
      [404, 'get', '/table/types/read(id,999)'],
      [409, 'post', '/table/parents/create', { id: 1, name: 'again' }],
      [400, 'post', '/table/types/create', { id: 50, pt: 'POINT(1 2)' }],
      [400, 'post', `/rpc/${q('größe plus')}`, { m: 4 }],
    ];
    await expectClean(await prismProxy(open), cases, { valid: false });
  });

  test('auth mode: with a token, and without one', async () => {
    await expectClean(
      await prismProxy(auth, token),
      [
        [200, 'get', '/table/parents/read'],
        [200, 'get', `/table/types/read?$apply=${q('aggregate($count as n)')}`],
        [200, 'get', '/auth/me'],
      ],
      { valid: true },
    );
    await expectClean(
      await prismProxy(auth, undefined, token),
      [[401, 'get', '/table/parents/read']],
      {
        valid: false,
      },
    );
  });
});

describe('real answers are valid against the description', () => {
  let document: Json;
  let ajv: Ajv2020;

  beforeAll(async () => {
    document = await description(open);
    ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    // Every component schema under its JSON pointer, so `$ref`s inside responses resolve.
    ajv.addSchema({ $id: 'doc', components: document.components }, 'doc');
  });

  /** The schema the description gives for `method path` answering `status`. */
  function responseSchema(method: string, template: string, status: number): Json {
    const paths = document.paths as Record<string, Record<string, Json>>;
    const operation = paths[template]?.[method.toLowerCase()];
    expect({ template, method, described: operation !== undefined }).toEqual({
      template,
      method,
      described: true,
    });
    const responses = (operation as Json).responses as Record<string, Json>;
    const response = (responses[String(status)] ?? responses.default) as Json;
    expect({ template, status, described: response !== undefined }).toEqual({
      template,
      status,
      described: true,
    });
    let resolved = response;
    if (typeof resolved.$ref === 'string') {
      const name = resolved.$ref.split('/').pop() as string;
      resolved = (document.components as { responses: Record<string, Json> }).responses[
        name
      ] as Json;
    }
    const content = resolved.content as Record<string, { schema: Json }>;
    return content['application/json']?.schema as Json;
  }

  /** `$ref: '#/components/…'` → `doc#/components/…`, so Ajv finds it in the added schema. */
  function rebased(schema: unknown): unknown {
    return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/'));
  }

  async function check(
    method: string,
    path: string,
    template: string,
    body?: unknown,
  ): Promise<{ status: number; json: unknown }> {
    const response = await fetch(open.url + path, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const json = await response.json();
    let schema = responseSchema(method, template, response.status);
    // A read's items are a row or (with `$apply`) a group, which may be any object: without
    // `$apply` the rows are checked against the row schema alone.
    const items = schema.items as { anyOf?: Json[] } | undefined;
    if (items?.anyOf !== undefined && !path.includes('$apply')) {
      schema = { ...schema, items: items.anyOf[0] };
    }
    const validate = ajv.compile(rebased(schema) as Json);
    const valid = validate(json);
    expect({ path, status: response.status, errors: valid ? null : validate.errors }).toEqual({
      path,
      status: response.status,
      errors: null,
    });
    return { status: response.status, json };
  }

  const enc = encodeURIComponent;

  test('rows of every type, GeoJSON and exact fractions included', async () => {
    const { status, json } = await check('GET', '/table/types/read', '/table/types/read');
    expect(status).toBe(200);
    expect((json as Json[]).length).toBe(2);
    await check(
      'GET',
      `/table/types/read?$select=id,pt,gc&$filter=${enc('id eq 1')}`,
      '/table/types/read',
    );
    await check('GET', '/table/odd%20names/read', '/table/odd%20names/read');
    await check('GET', '/table/type_counts/read', '/table/type_counts/read');
  });

  test('errors: a bad filter, an unknown column, a bad GeoJSON write', async () => {
    expect(
      (await check('GET', `/table/types/read?$filter=${enc("d gt 'abc'")}`, '/table/types/read'))
        .status,
    ).toBe(400);
    expect((await check('GET', '/table/types/read?$select=nope', '/table/types/read')).status).toBe(
      400,
    );
    expect(
      (
        await check('POST', '/table/types/create', '/table/types/create', {
          id: 50,
          pt: 'POINT(1 2)',
        })
      ).status,
    ).toBe(400);
  });

  test('write results', async () => {
    const point = { type: 'Point', coordinates: [1, 2] };
    expect(
      (
        await check('POST', '/table/types/create', '/table/types/create', {
          id: 51,
          pt: point,
          dt3: '2024-05-01T10:00:00.250Z',
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await check('PUT', '/table/types/update(id,51)', '/table/types/update({key},{value})', {
          g: point,
        })
      ).status,
    ).toBe(200);
    expect(
      (await check('DELETE', '/table/types/delete(id,51)', '/table/types/delete({key},{value})'))
        .status,
    ).toBe(200);
  });
});
