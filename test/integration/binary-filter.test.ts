/**
 * Binary columns filtered by the base64 text reads show them in (docs/types.md, docs/filters.md),
 * over HTTP against MariaDB: `eq`, `ne`, `in`, ordering comparisons, a BINARY(n) and a BLOB, a
 * `$apply` filter, a policy's where and the key syntax; text that is no base64, and text matches,
 * are 400 FILTER_TYPE naming the column.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { signUpAs, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const FIXTURE = `
CREATE TABLE blobs (id INT PRIMARY KEY, bin VARBINARY(8) NULL UNIQUE, fixed BINARY(3) NULL,
  body BLOB NULL, label VARCHAR(10) NULL);
INSERT INTO blobs VALUES
  (1, x'000102', x'61', x'deadbeef', 'one'),
  (2, x'ff', x'616263', x'', 'two'),
  (3, x'', NULL, NULL, 'three'),
  (4, NULL, x'000000', x'00', 'four');
`;

const POLICY = {
  roles: {
    user: { tables: { blobs: { read: { where: "bin eq 'AAEC' or bin eq '/w=='" } } } },
  },
};

let db: TestDatabase;
let open: TestGateway;
let guarded: TestGateway;
let dir: string;
let token: string;

async function read(gateway: TestGateway, query: string, bearer?: string) {
  const response = await fetch(`${gateway.url}/table/blobs/${query}`, {
    headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` },
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

const ids = async (filter: string) => {
  const answer = await read(
    open,
    `read?$select=id&$orderby=id&$filter=${encodeURIComponent(filter)}`,
  );
  expect(answer.status).toBe(200);
  return (answer.body as { id: number }[]).map((row) => row.id);
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-binary-'));
  const file = path.join(dir, 'policy.json');
  await writeFile(file, JSON.stringify(POLICY));
  db = await createTestDatabase(FIXTURE);
  open = await startTestGateway(db.name);
  guarded = await startTestGateway(db.name, {
    mode: 'auth',
    jwtSecret: 'binary-filter-secret-0123456789abcdefghijklmnop',
    policyFile: file,
  });
  ({ token } = await signUpAs(
    guarded.url,
    db.admin,
    { email: 'user@x.test', password: 'correct horse battery' },
    'user',
  ));
});

afterAll(async () => {
  await open?.close();
  await guarded?.close();
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('a quoted string meets a binary column as its base64', () => {
  test('reads show the base64 the filters take', async () => {
    expect((await read(open, 'read?$orderby=id')).body).toEqual([
      { id: 1, bin: 'AAEC', fixed: 'YQAA', body: '3q2+7w==', label: 'one' },
      { id: 2, bin: '/w==', fixed: 'YWJj', body: '', label: 'two' },
      { id: 3, bin: '', fixed: null, body: null, label: 'three' },
      { id: 4, bin: null, fixed: 'AAAA', body: 'AA==', label: 'four' },
    ]);
  });

  test.each<[string, number[]]>([
    ["bin eq 'AAEC'", [1]],
    ["'/w==' eq bin", [2]],
    ["bin eq ''", [3]],
    ["bin ne 'AAEC'", [2, 3]],
    ["bin in ('AAEC', '/w==')", [1, 2]],
    ["bin in ('AAEC', null)", [1, 4]],
    ["bin gt 'AAEC'", [2]],
    ["bin lt '/w=='", [1, 3]],
    // BINARY(3) holds its values padded with zero bytes, as reads show them.
    ["fixed eq 'YQAA'", [1]],
    ["fixed eq 'AAAA'", [4]],
    ["body eq '3q2+7w=='", [1]],
    ["body eq '' or body eq 'AA=='", [2, 4]],
    ["not (body eq '3q2+7w==')", [2, 4]],
    // The base64 of bytes that are no UTF-8, and text columns as before.
    ["bin eq 'AAEC' and label eq 'one'", [1]],
  ])('%s', async (filter, expected) => {
    expect(await ids(filter)).toEqual(expected);
  });

  test('a $apply filter and the key syntax take it too', async () => {
    const totals = await read(
      open,
      `read?$apply=${encodeURIComponent("filter(bin in ('AAEC', '/w=='))/aggregate($count as n)")}`,
    );
    expect(totals).toEqual({ status: 200, body: [{ n: 2 }] });
    expect(await read(open, "read(bin,'%2Fw%3D%3D')?$select=id,label")).toEqual({
      status: 200,
      body: { id: 2, label: 'two' },
    });
  });

  test('a policy where names binary values by their base64', async () => {
    expect(await read(guarded, 'read?$select=id&$orderby=id', token)).toEqual({
      status: 200,
      body: [{ id: 1 }, { id: 2 }],
    });
  });
});

describe('refused, naming the column', () => {
  test.each<[string, string]>([
    [
      "bin eq 'AAE'",
      "Invalid $filter at position 5: the string 'AAE' cannot be compared with column 'bin' (varbinary), which is binary: it is not standard base64 (A–Z, a–z, 0–9, +, /, = padding), the form reads show binary values in",
    ],
    [
      "body in ('3q2+7w==', 'dead beef')",
      "Invalid $filter at position 1: the string 'dead beef' cannot be compared with column 'body' (blob), which is binary: it is not standard base64 (A–Z, a–z, 0–9, +, /, = padding), the form reads show binary values in",
    ],
    [
      "contains(bin, 'AA')",
      "Invalid $filter at position 10: contains() needs text, and column 'bin' (varbinary) is binary: compare it whole, by its base64 text, with eq, ne or in",
    ],
    [
      "endswith(body, '7w==')",
      "Invalid $filter at position 10: endswith() needs text, and column 'body' (blob) is binary: compare it whole, by its base64 text, with eq, ne or in",
    ],
  ])('%s: 400 FILTER_TYPE', async (filter, message) => {
    expect(await read(open, `read?$filter=${encodeURIComponent(filter)}`)).toEqual({
      status: 400,
      body: { success: false, code: 'FILTER_TYPE', message },
    });
  });
});
