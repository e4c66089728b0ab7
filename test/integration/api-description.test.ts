/**
 * The API description of a real schema (every type family, odd names, relations, views MySQL can
 * and cannot write, a stored procedure and a function), in open and in auth mode: Redocly's
 * recommended ruleset finds no error in it, and real answers of the gateway — rows of every type,
 * GeoJSON, errors, write results — are valid against the response schema the description gives
 * for their operation and status (JSON Schema 2020-12, as OpenAPI 3.1 uses it, checked with Ajv).
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv2020 } from 'ajv/dist/2020.js';
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
    const schema = responseSchema(method, template, response.status);
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
