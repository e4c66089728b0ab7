/**
 * Which reads are fetched whole instead of streamed (plan/small-read.ts): only where
 * the plan bounds the memory — one row by a one-column primary key, or a small `$top` of
 * columns of bounded width. Both paths give the same bytes; this decides only memory.
 */
import { expect, test } from '@jest/globals';
import { planRead } from '../../../src/plan/read-plan.js';
import { isSmallRead } from '../../../src/plan/small-read.js';
import { parseReadOptions } from '../../../src/query/options.js';
import { column, events, id, order, table } from '../fixtures/schema.js';

const small = (query: Record<string, string>, on = order) =>
  isSmallRead(planRead(parseReadOptions(query), on));

test('one row: the one-column primary key compared for equality with a value, alone or in a top-level and', () => {
  expect(small({ $filter: 'id eq 5' })).toBe(true);
  expect(small({ $filter: '5 eq id' })).toBe(true);
  expect(small({ $filter: "id eq 5 and select eq 'x'" })).toBe(true);
  expect(small({ $filter: "(select eq 'x' and (price gt 1 and id eq 5))" })).toBe(true);
  // Any width: a streamed read holds one whole row at a time as well.
  expect(small({ $filter: 'id eq 5' }, events)).toBe(true);
});

test('not one row: another column, another operator, under or / not, or a composite key', () => {
  expect(small({ $filter: 'price eq 5' })).toBe(false);
  expect(small({ $filter: 'id ge 5' })).toBe(false);
  expect(small({ $filter: 'id ne 5' })).toBe(false);
  expect(small({ $filter: 'id eq 5 or id eq 6' })).toBe(false);
  expect(small({ $filter: 'not (id eq 5)' })).toBe(false);
  const pair = table('pair', [id, column('n')], ['id', 'n']);
  expect(small({ $filter: 'id eq 5' }, pair)).toBe(false);
  const noKey = table('nokey', [id]);
  expect(small({ $filter: 'id eq 5' }, noKey)).toBe(false);
});

test('a $top of bounded columns, as long as the widest rows fit the byte bound', () => {
  expect(small({ $top: '50' })).toBe(true);
  expect(small({ $top: '100' })).toBe(true);
  expect(small({ $top: '101' })).toBe(false);
  expect(small({})).toBe(false);
  // A JSON (LONGTEXT) column has no useful bound.
  expect(small({ $top: '5' }, events)).toBe(false);
  expect(small({ $top: '5', $select: 'id,price' }, events)).toBe(true);
  const wide = table('wide', [id, column('big', { kind: 'string', maxLength: 16_000 })], ['id']);
  // 4 × 16,000 bytes a row: 4 rows fit in 256 KiB, 5 do not.
  expect(small({ $top: '4' }, wide)).toBe(true);
  expect(small({ $top: '5' }, wide)).toBe(false);
  const text = table('text', [id, column('body', { kind: 'string', maxLength: 65_535 })], ['id']);
  expect(small({ $top: '1' }, text)).toBe(false);
});
