/**
 * Filter fuzzing against MariaDB (issue 9): random valid `$filter` ASTs and read options,
 * planned against the live schema of a table with every kind of column (a latin1 one, binary,
 * JSON, dates, ENUM/SET, BIT, a reserved word and a backtick in names), compiled, and executed
 * as the gateway executes them (prepared statements on its own pool, in its session state).
 * MySQL must accept every statement, or refuse it with an error the gateway answers as a 4xx: a
 * syntax error or any unmapped error here would be a 500 in production. (The fuzz found one: a
 * value a latin1 column cannot hold, 'Ā', makes MySQL refuse the comparison, "Illegal mix of
 * collations"; it is now a 400.) The row count of a read without paging must equal its $count.
 * The filters include CONTRACT §3.1a's unquoted dates, datetimes with offsets, times of day and
 * the column functions, on the DATE, DATETIME(3), TIME and text columns (issue 18).
 * The same reads also run under a policy's row condition (issue 14): whatever the filter, every
 * row returned satisfies the policy's where, and the unpaged count still matches.
 * Generated `$apply` expressions run the same way, through a to-one relation too:
 * every statement runs or is a 4xx, every answer object is JSON, and unpaged, the groups'
 * `$count` adds up to the rows the filters pass (no row lost or counted twice by the grouping).
 * The seed of a failing run is printed by fast-check; FUZZ_SEED=<n> replays it.
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { mapDbError } from '../../src/db/errors.js';
import type { TableInfo } from '../../src/db/schema-types.js';
import { compileApplyPlan } from '../../src/pipeline/apply-read.js';
import type { CompiledRead } from '../../src/pipeline/read.js';
import { planApply } from '../../src/plan/apply.js';
import { planRead } from '../../src/plan/read-plan.js';
import { validatePolicy } from '../../src/policy/policy.js';
import { viewerFor } from '../../src/policy/views.js';
import { parseReadOptions } from '../../src/query/options.js';
import { compileApplyCount } from '../../src/sql/compile-apply.js';
import { compileCount, compileRead } from '../../src/sql/compile-read.js';
import type { CompiledQuery } from '../../src/sql/compiled-query.js';
import { bindUser } from '../../src/sql/user-values.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import {
  applyArb,
  filterArb,
  filterableColumns,
  filterText,
  optionsArb,
  spellingArb,
} from '../helpers/filter-arbitraries.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const seed = fuzzSeed();
const RUNS = 1500;

const FIXTURE = `
CREATE TABLE \`order\` (
  id INT UNSIGNED AUTO_INCREMENT PRIMARY KEY,
  \`select\` VARCHAR(100) NOT NULL,
  price DECIMAL(10,2) NOT NULL,
  note VARCHAR(100) NULL,
  \`größe\` INT NULL,
  \`we\`\`ird\` VARCHAR(100) NOT NULL DEFAULT '',
  shipped TINYINT(1) NOT NULL DEFAULT 0,
  legacy VARCHAR(50) CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL,
  day DATE NULL,
  at DATETIME(3) NULL,
  big BIGINT UNSIGNED NULL,
  ratio DOUBLE NULL,
  data VARBINARY(20) NULL,
  doc JSON NULL,
  mood ENUM('happy', 'sad') NULL,
  flags SET('a', 'b') NULL,
  bits BIT(8) NULL,
  y YEAR NULL,
  t TIME NULL
);
INSERT INTO \`order\` (\`select\`, price, note, \`größe\`, \`we\`\`ird\`, shipped, legacy, day, at, big, ratio, data, doc, mood, flags, bits, y, t) VALUES
  ('a', 1.50, NULL, 3, 'x', 1, 'café', '2024-02-29', '2024-02-29 12:00:00.123', 18446744073709551615, 1.5, X'00FF', '{"a": 1}', 'happy', 'a,b', b'1010', 2024, '12:30:00'),
  ('O''Brien', 0.00, '50% off_sale', NULL, '', 0, NULL, NULL, NULL, 0, -2.5e300, NULL, '[1, "two"]', 'sad', '', b'0', 1999, '-01:00:00'),
  ('Zoë 😀', 99999999.99, 'tab\there', -7, 'y', 1, 'naïve', '1000-01-01', '9999-12-31 23:59:59.999', 9007199254740993, NULL, X'', 'null', NULL, 'b', NULL, NULL, NULL);
`;

let db: TestDatabase;
let gw: TestGateway;
let table: TableInfo;

beforeAll(async () => {
  db = await createTestDatabase(FIXTURE);
  gw = await startTestGateway(db.name);
  table = await gw.gateway.schema.require('order');
});

afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

/** Runs a statement the way the gateway's read path does (the execute stage's row stream). */
function run(query: CompiledQuery): Promise<unknown[][]> {
  return new Promise((resolve, reject) => {
    const rows: unknown[][] = [];
    gw.gateway.db
      .stream(query, {
        row: (values) => rows.push(values),
        end: () => resolve(rows),
        fail: reject,
      })
      .catch(reject);
  });
}

test('every generated read runs on MariaDB (or is a 4xx), and an unpaged read returns $count rows', async () => {
  const columns = filterableColumns(table);
  expect(columns).toEqual(expect.arrayContaining(['select', 'größe', 'legacy', 'doc', 'bits']));
  let executed = 0;
  const refused = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(
      filterArb(table),
      spellingArb,
      optionsArb(table),
      async (ast, spelling, options) => {
        const text = filterText(ast, spelling);
        const plan = planRead(parseReadOptions({ ...options, $filter: text }), table);
        const read = compileRead(plan);
        const count = compileCount(plan);
        let rows: unknown[][];
        let counted: unknown[][];
        try {
          rows = await run(read);
          counted = await run(count);
        } catch (error) {
          const { code, sqlMessage } = error as { code?: string; sqlMessage?: string };
          const answer = mapDbError(error);
          if (answer.status >= 400 && answer.status < 500) {
            refused.set(answer.code, (refused.get(answer.code) ?? 0) + 1);
            return;
          }
          throw new Error(
            `MariaDB refused a compiled read, which would answer ${answer.status}: ${code} ${sqlMessage}\nfilter: ${text}\nsql: ${read.sql}\nparams: ${JSON.stringify(read.params)}`,
          );
        }
        executed += 1;
        if (options.$top === undefined && options.$skip === undefined) {
          expect(rows.length).toBe(Number(counted[0]?.[0]));
        }
      },
    ),
    { numRuns: RUNS, seed },
  );
  const refusals = [...refused.values()].reduce((a, b) => a + b, 0);
  expect(executed + refusals).toBe(RUNS);
  // Most statements must really run, or the fuzz proves little.
  expect(executed).toBeGreaterThan(RUNS * 0.8);
  console.log(
    `filter round trip: ${executed} of ${RUNS} generated reads ran on MariaDB (read and $count); ` +
      `refused with a 4xx: ${[...refused].map(([code, n]) => `${code} × ${n}`).join(', ') || 'none'}`,
  );
}, 120_000);

/** A where that holds for some rows only, and the ids of those rows. */
const POLICY_WHERE = '(shipped eq true and note eq null) or id eq @user.id';

test('under a policy, no generated filter widens the where; $count stays exact', async () => {
  const policy = validatePolicy(
    { roles: { user: { tables: { order: { read: { where: POLICY_WHERE } } } } } },
    new Map([['order', table]]),
  );
  const access = { policy, role: 'user', user: { id: '2', email: 'u@x.org', role: 'user' } };
  // Rows 1 (shipped, note NULL) and 2 (the user's id); row 3 (shipped, a note) is outside.
  const allowed = new Set(['1', '2']);
  let executed = 0;
  await fc.assert(
    fc.asyncProperty(
      filterArb(table),
      spellingArb,
      optionsArb(table),
      async (ast, spelling, options) => {
        const text = filterText(ast, spelling);
        const request = parseReadOptions({ ...options, $select: 'id', $filter: text });
        let rows: unknown[][];
        let counted: unknown[][];
        try {
          const plan = planRead(request, table, viewerFor(access));
          rows = await run(bindUser(compileRead(plan), access.user));
          counted = await run(bindUser(compileCount(plan), access.user));
        } catch (error) {
          if (mapDbError(error).status < 500) return;
          throw error;
        }
        executed += 1;
        for (const [id] of rows) expect(allowed.has(String(id))).toBe(true);
        expect(Number(counted[0]?.[0])).toBeLessThanOrEqual(allowed.size);
        if (options.$top === undefined && options.$skip === undefined) {
          expect(rows.length).toBe(Number(counted[0]?.[0]));
        }
      },
    ),
    { numRuns: 500, ...(seed === undefined ? {} : { seed }) },
  );
  expect(executed).toBeGreaterThan(400);
}, 120_000);

test('over HTTP, a value the column cannot hold is a 400, not a 500', async () => {
  for (const filter of ["contains(legacy, 'Ā')", "legacy eq '😀'", "legacy in ('a', 'Ā')"]) {
    const response = await fetch(
      `${gw.url}/table/order/read?$filter=${encodeURIComponent(filter)}`,
    );
    expect({ filter, status: response.status }).toEqual({ filter, status: 400 });
    expect(await response.json()).toEqual({
      success: false,
      message:
        "A value holds characters that the column's character set cannot store, so it cannot be compared with the column",
      code: expect.stringMatching(/^ER_CANT_AGGREGATE_[23N]COLLATIONS$/),
    });
  }
  const update = await fetch(`${gw.url}/table/order/update(legacy,'Ā')`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ note: 'x' }),
  });
  expect(update.status).toBe(400);
});

/** `line` → `order`: a to-one relation for the paths of generated `$apply` expressions. */
const LINES = `
CREATE TABLE line (id INT AUTO_INCREMENT PRIMARY KEY, order_id INT UNSIGNED NULL, qty INT NOT NULL,
  amount DECIMAL(10,2) NULL, label VARCHAR(20) NULL, at DATETIME(3) NULL,
  FOREIGN KEY (order_id) REFERENCES \`order\` (id));
INSERT INTO line (order_id, qty, amount, label, at) VALUES
  (1, 2, 3.50, 'a', '2024-01-01 10:00:00.500'), (1, 1, NULL, 'b', NULL),
  (2, 5, 10.00, 'a', '2023-05-05 00:00:00.000'), (3, 0, 0.01, NULL, '2024-02-29 23:59:59.999'),
  (NULL, 7, 99999999.99, 'Zoë', NULL), (3, -1, -0.50, 'b', '2024-01-01 00:00:00.000');
`;

test('every generated $apply runs on MariaDB (or is a 4xx); its groups hold each row the filters pass once', async () => {
  await db.admin.query(LINES);
  const line = await gw.gateway.schema.require('line');
  const order = line.relations.get('order')?.target as TableInfo;
  expect(order.name).toBe('order');
  let executed = 0;
  const refused = new Map<string, number>();
  const shapes = { groups: 0, one: 0, rows: 0 };
  await fc.assert(
    fc.asyncProperty(applyArb(line, [{ name: 'order', target: order }]), async (generated) => {
      const { query, shape, countAt } = generated;
      let compiled: CompiledRead;
      let rows: unknown[][];
      let counted: unknown[][];
      let passed: unknown[][];
      try {
        const plan = planApply(parseReadOptions(query), line);
        compiled = compileApplyPlan(plan);
        rows = await run(compiled.select);
        counted = await run(compileApplyCount({ ...plan, count: true }));
        // The rows before grouping: the same FROM and WHERE, counted without groups.
        passed = await run(compileApplyCount({ ...plan, groupBy: null }));
      } catch (error) {
        const answer = mapDbError(error);
        if (answer.status >= 400 && answer.status < 500) {
          refused.set(answer.code, (refused.get(answer.code) ?? 0) + 1);
          return;
        }
        const { code, sqlMessage } = error as { code?: string; sqlMessage?: string };
        throw new Error(
          `a generated $apply would answer ${answer.status}: ${code} ${sqlMessage ?? (error as Error).message}\nquery: ${JSON.stringify(query)}`,
        );
      }
      executed += 1;
      shapes[shape] += 1;
      // Every answer object is JSON whatever the values.
      for (const row of rows) expect(() => JSON.parse(compiled.serialize(row))).not.toThrow();
      if (query.$top !== undefined || query.$skip !== undefined) return;
      expect(rows.length).toBe(Number(counted[0]?.[0]));
      const rowsPassed = BigInt(String(passed[0]?.[0]));
      if (shape === 'rows') expect(BigInt(rows.length)).toBe(rowsPassed);
      else {
        if (shape === 'one') expect(rows.length).toBe(1);
        const inGroups = rows.reduce(
          (sum, row) => sum + BigInt(String(row[countAt as number])),
          0n,
        );
        expect(inGroups).toBe(rowsPassed);
      }
    }),
    { numRuns: 800, ...(seed === undefined ? {} : { seed }) },
  );
  const refusals = [...refused.values()].reduce((a, b) => a + b, 0);
  expect(executed + refusals).toBe(800);
  expect(executed).toBeGreaterThan(800 * 0.8);
  console.log(
    `$apply round trip: ${executed} of 800 generated reads ran on MariaDB (${shapes.groups} grouped, ${shapes.one} aggregate() alone, ${shapes.rows} rows); ` +
      `refused with a 4xx: ${[...refused].map(([code, n]) => `${code} × ${n}`).join(', ') || 'none'}`,
  );
}, 180_000);
