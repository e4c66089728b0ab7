/**
 * The API description as a generated TypeScript client reads it: openapi-typescript turns the
 * live `/openapi.json` into types, a small program uses them through openapi-fetch with the
 * default type arguments, as its README shows (`client.GET(path)`, `data?.map(…)`), and strict
 * `tsc` must accept it; then the program runs against the gateway and prints what it read.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SCHEMA = `
CREATE TABLE categories (id INT PRIMARY KEY, title VARCHAR(40) NOT NULL);
CREATE TABLE products (
  id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(8,2) NOT NULL, category_id INT NULL,
  FOREIGN KEY (category_id) REFERENCES categories (id)
);
INSERT INTO categories VALUES (1, 'tea');
INSERT INTO products VALUES (1, 'Sencha', 4.50, 1), (2, NULL, 2.00, NULL);
CREATE TABLE \`zip codes\` (id INT PRIMARY KEY, city VARCHAR(40) NOT NULL);
INSERT INTO \`zip codes\` VALUES (1, 'Köln');
`;

/** What a user of the generated client writes, the default type arguments everywhere. */
const PROGRAM = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const client = createClient<paths>({ baseUrl: process.env.BASE_URL });

// The README's first read. Its items are a row or, with $apply, a group of any keys.
const { data, error } = await client.GET('/table/products/read', {
  params: { query: { $orderby: 'id' } },
});
if (error !== undefined) throw new Error(JSON.stringify(error));
const names = data?.map((r) => r.name);

// Totals: the same operation, the groups' keys are the request's.
const totals = await client.GET('/table/products/read', {
  params: { query: { $apply: 'aggregate(price with sum as total,$count as n)' } },
});
const group = totals.data?.[0];
const total = group !== undefined && 'total' in group ? group.total : undefined;

// One row by its key: the row schema's types.
const one = await client.GET('/table/products/read({key},{value})', {
  params: { path: { key: 'id', value: '1' } },
});
const name: string | null | undefined = one.data?.name;
const price: number | undefined = one.data?.price;

// A name with a space: the path as the description writes it, percent-encoded.
const zip = await client.GET('/table/zip%20codes/read({key},{value})', {
  params: { path: { key: 'id', value: '1' } },
});
const city: string | undefined = zip.data?.city;

console.log(JSON.stringify({ names, total, name, price, city }));
`;

const run = promisify(execFile);

let db: TestDatabase;
let gateway: TestGateway;
let dir: string;

beforeAll(async () => {
  db = await createTestDatabase(SCHEMA);
  gateway = await startTestGateway(db.name);
  dir = await mkdtemp(path.join(os.tmpdir(), 'tablegate-client-'));
  // The program resolves openapi-fetch from this repository's packages.
  await symlink(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir');
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
});
afterAll(async () => {
  await gateway?.close();
  await db?.drop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Strict tsc's complaints about the program, one line each. */
function compile(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [path.resolve('node_modules/@types')],
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    const where = diagnostic.file
      ? `${path.basename(diagnostic.file.fileName)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}`
      : '';
    return `${where} ${text}`;
  });
}

test('openapi-typescript + openapi-fetch: the program compiles (strict) and reads the rows', async () => {
  const description = await (await fetch(`${gateway.url}/openapi.json`)).json();
  await writeFile(path.join(dir, 'schema.d.ts'), astToString(await openapiTS(description)));
  const main = path.join(dir, 'main.ts');
  await writeFile(main, PROGRAM);
  expect(compile(main)).toEqual([]);

  const js = ts.transpileModule(PROGRAM, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  await writeFile(path.join(dir, 'main.js'), js);
  const { stdout } = await run(process.execPath, [path.join(dir, 'main.js')], {
    env: { ...process.env, BASE_URL: gateway.url },
  });
  expect(JSON.parse(stdout)).toEqual({
    names: ['Sencha', null],
    total: 6.5,
    name: 'Sencha',
    price: 4.5,
    city: 'Köln',
  });
}, 60_000);
