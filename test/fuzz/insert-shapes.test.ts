/**
 * One-row creates by body shape (pipeline/insert-shapes.ts): a create served from a learnt shape
 * is exactly the job the full path plans afresh — the same statement, parameters and mode, or
 * the same error — for random bodies of every column kind in random key orders, valid and not;
 * shapes serve only the table object they were learnt on, never a caller with a policy or a
 * `Prefer`, and at most INSERT_SHAPES_PER_TABLE of them are kept. FUZZ_SEED replays a run.
 */
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { TableInfo } from '../../src/db/schema-types.js';
import { ApiError } from '../../src/errors.js';
import { INSERT_SHAPES_PER_TABLE } from '../../src/limits.js';
import { shapeOf } from '../../src/pipeline/insert-shapes.js';
import { createJob } from '../../src/pipeline/write.js';
import { validatePolicy } from '../../src/policy/policy.js';
import type { Access } from '../../src/policy/views.js';
import { parsePrefer } from '../../src/query/prefer.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';
import { at, column, day, doc, id, price, table, text } from '../unit/fixtures/schema.js';

const seed = fuzzSeed();

const columns = [
  id,
  // The constant default decides whether leaving it out keeps autocommit.
  column('qty', { nullable: true, hasDefault: true, constantDefault: true }),
  column('rank', { nullable: true, hasDefault: true }),
  price,
  text('code', { maxLength: 4, columnType: 'varchar(4)', nullable: true }),
  text('name', { nullable: true, constantDefault: true, hasDefault: true }),
  text('kind', {
    dataType: 'enum',
    columnType: "enum('a','b','c')",
    maxLength: 1,
    nullable: true,
    constantDefault: true,
    hasDefault: true,
  }),
  day,
  at,
  doc,
];
const fresh = (): TableInfo => ({ ...table('items', columns, ['id']), hasTriggers: false });
/** Every column but id named or with a constant default: such a row may run alone. */
const small = (): TableInfo => ({
  ...table(
    'small',
    [id, ...columns.filter((c) => ['name', 'code', 'price'].includes(c.name))],
    ['id'],
  ),
  hasTriggers: false,
});

/** What createJob gives for `body`: its result, or the error it throws. */
function outcome(table: TableInfo, body: unknown, access: Access | null = null): unknown {
  try {
    return createJob(table, body, access);
  } catch (error) {
    if (error instanceof ApiError) return { error: error.code, message: error.message };
    throw error;
  }
}

const value = fc.oneof(
  fc.constant(null),
  fc.integer({ min: -5, max: 100_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1.5, 12.34, 99_999_999.99, 1.005, 1e21, 0.1),
  fc.constantFrom('a', 'b', 'd', '4', 'abcd', 'abcde', 'abc  ', '', 'x'.repeat(101)),
  fc.constantFrom('2024-02-29', '2024-02-30', '2024-01-01 10:00:00', '2024-01-01T10:00:00.5'),
  fc.constantFrom('12.50', '1e3', '-0', 'not a number', '9007199254740993'),
  fc.boolean(),
  fc.constantFrom({ a: 1 }, [1, 2], { type: 'Point', coordinates: [1, 2] }),
);
/**
 * Values each column takes, so that most bodies plan and their shapes are learnt, with the
 * values that decide autocommit among them: text that fits or not, a DATE given a time.
 */
const TAKEN: Readonly<Record<string, readonly unknown[]>> = {
  id: [5],
  qty: [3, null],
  rank: [4],
  price: [12.5, 7],
  code: ['ab', 'abcd', 'abc  ', 'ab c', 'é'],
  name: ['n', 'x'.repeat(100)],
  kind: ['a', 'B'],
  day: ['2024-01-01', '2024-01-01 10:00:00'],
  at: ['2024-01-01 10:00:00', '2024-01-01'],
  doc: [{ a: 1 }, 'text'],
};
/** A body of these keys, each value one the column takes three times in four. */
const bodyOf = (keys: readonly string[]) =>
  fc
    .tuple(
      ...keys.map((key) =>
        fc.oneof({ arbitrary: fc.constantFrom(...(TAKEN[key] ?? [1])), weight: 3 }, value),
      ),
    )
    .map((values) => Object.fromEntries(keys.map((key, at) => [key, values[at]])));
/**
 * A table and bodies of a few key sets of its columns (and an unknown one), so that shapes
 * are learnt and then used with other values.
 */
const tableAndBodies = fc.constantFrom(fresh, small).chain((make) => {
  const names = [...make().columns.map((c) => c.name), 'missing'];
  const keySet = fc.uniqueArray(fc.constantFrom(...names), { minLength: 0, maxLength: 6 });
  const bodies = fc
    .array(keySet, { minLength: 1, maxLength: 3 })
    .chain((sets) =>
      fc.array(fc.constantFrom(...sets).chain(bodyOf), { minLength: 1, maxLength: 16 }),
    );
  return fc.tuple(fc.constant(make), bodies);
});

describe('one-row creates by body shape', () => {
  test('a create served from its shape is the job (or the error) the full path plans', () => {
    let served = 0;
    fc.assert(
      fc.property(tableAndBodies, ([make, rows]) => {
        const shared = make();
        for (const row of rows) {
          // Twice on the shared table: the first call may learn the shape, the second uses it.
          outcome(shared, row);
          if (shapeOf(shared, row) !== undefined) served++;
          expect(outcome(shared, row)).toEqual(outcome(make(), row));
        }
      }),
      { seed, numRuns: 600 },
    );
    // The property ran through shapes, not only through the full path.
    expect(served).toBeGreaterThan(1000);
  });

  test('the same keys with other values: exactness and errors follow the values', () => {
    const shared = small();
    const first = outcome(shared, { name: 'ok', code: 'ab', price: 1.5 });
    expect(first).toMatchObject({ job: { mode: 'alone' } });
    expect(shapeOf(shared, { name: 'x', code: 'y', price: 2 })).toBeDefined();
    // 'abc  ' in a VARCHAR(4) would be cut with a note: a transaction, as the full path says.
    const spaced = { name: 'ok', code: 'abc  ', price: 1.5 };
    expect(outcome(shared, spaced)).toMatchObject({ job: { mode: 'transaction' } });
    expect(outcome(shared, spaced)).toEqual(outcome(small(), spaced));
    const bad = { name: 'ok', code: 'ab', price: 1.005 };
    expect(outcome(shared, bad)).toEqual({
      error: 'INVALID_VALUE',
      message: expect.stringContaining("Column 'price'"),
    });
    expect(outcome(shared, bad)).toEqual(outcome(small(), bad));
    // Another key order is another shape, learnt on its own.
    expect(shapeOf(shared, { price: 2, code: 'y', name: 'x' })).toBeUndefined();
  });

  test('a shape serves only its own table object', () => {
    const shared = fresh();
    outcome(shared, { name: 'n' });
    expect(shapeOf(shared, { name: 'n' })).toBeDefined();
    expect(shapeOf(fresh(), { name: 'n' })).toBeUndefined();
  });

  test('callers with a policy or a Prefer, and arrays of rows, never learn or use a shape', () => {
    const policy = validatePolicy(
      {
        roles: { writer: { tables: { items: { read: true, create: { where: "name ne 'x'" } } } } },
      },
      new Map([['items', fresh()]]),
    );
    const access: Access = { policy, role: 'writer', user: null };
    const shared = fresh();
    outcome(shared, { name: 'n' }, access);
    expect(shapeOf(shared, { name: 'n' })).toBeUndefined();
    createJob(shared, { name: 'n' }, null, parsePrefer('return=representation'));
    expect(shapeOf(shared, { name: 'n' })).toBeUndefined();
    outcome(shared, [{ name: 'n' }]);
    expect(shapeOf(shared, { name: 'n' })).toBeUndefined();
    // Learnt by a plain caller, a shape still leaves a policy's caller to the full path.
    outcome(shared, { name: 'n' });
    expect(shapeOf(shared, { name: 'n' })).toBeDefined();
    // Its policy's where is checked after the INSERT: a guard the shape's job never has.
    expect(outcome(shared, { name: 'n' }, access)).toMatchObject({
      job: { mode: 'transaction', guards: [expect.anything()] },
    });
    expect(outcome(shared, { name: 'n' })).toMatchObject({ job: { guards: [] } });
  });

  test(`at most ${INSERT_SHAPES_PER_TABLE} shapes are kept per table`, () => {
    const shared = fresh();
    const bodies = [
      { name: 'n' },
      { code: 'c' },
      { price: 1 },
      { qty: 1 },
      { rank: 1 },
      { kind: 'a' },
      { day: '2024-01-01' },
      { at: '2024-01-01 10:00:00' },
      { doc: {} },
    ];
    expect(bodies.length).toBe(INSERT_SHAPES_PER_TABLE + 1);
    for (const row of bodies) outcome(shared, row);
    for (const row of bodies.slice(0, -1)) expect(shapeOf(shared, row)).toBeDefined();
    expect(shapeOf(shared, { doc: {} })).toBeUndefined();
    expect(outcome(shared, { doc: {} })).toEqual(outcome(fresh(), { doc: {} }));
  });
});
