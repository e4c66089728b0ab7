import { describe, expect, test } from '@jest/globals';
import { planDelete, planInsert, planUpdate } from '../../../src/plan/write-plan.js';
import { parseKeyValue } from '../../../src/query/key-value.js';
import {
  compileDelete,
  compileInsert,
  compileInsertBatches,
  compileUpdate,
} from '../../../src/sql/compile-write.js';
import { column, order, table } from '../fixtures/schema.js';

const kv = (text: string) => parseKeyValue(text);

describe('compileInsert', () => {
  test('one row', () => {
    expect(compileInsert(planInsert(order, { select: 'a', price: '9.99' }))).toEqual({
      sql: 'INSERT INTO `order` (`select`, `price`) VALUES (?, ?)',
      params: ['a', '9.99'],
    });
  });

  test('several rows: DEFAULT, as a keyword, where a row leaves a column out', () => {
    const plan = planInsert(order, [
      { select: 'a', price: 1 },
      { select: 'b', note: 'n' },
      { größe: 3, 'we`ird': 'w' },
    ]);
    expect(compileInsert(plan)).toEqual({
      sql:
        'INSERT INTO `order` (`select`, `price`, `note`, `größe`, `we``ird`) VALUES ' +
        '(?, ?, DEFAULT, DEFAULT, DEFAULT), (?, DEFAULT, ?, DEFAULT, DEFAULT), (DEFAULT, DEFAULT, DEFAULT, ?, ?)',
      params: ['a', '1', 'b', 'n', 3, 'w'],
    });
  });

  test('null is a parameter, not DEFAULT', () => {
    expect(compileInsert(planInsert(order, [{ note: null }, { select: 'x' }]))).toEqual({
      sql: 'INSERT INTO `order` (`note`, `select`) VALUES (?, DEFAULT), (DEFAULT, ?)',
      params: [null, 'x'],
    });
  });

  test('a hostile table name is only ever quoted', () => {
    const evil = table('x`; DROP TABLE y; --', [column('id')]);
    expect(compileInsert(planInsert(evil, { id: 1 }))).toEqual({
      sql: 'INSERT INTO `x``; DROP TABLE y; --` (`id`) VALUES (?)',
      params: [1],
    });
  });
});

describe('compileInsertBatches', () => {
  const plan = planInsert(order, [
    { select: 'a', price: 1 },
    { select: 'b' },
    { select: 'c', price: 3 },
    { select: 'd', price: 4 },
  ]);

  test('one statement when the placeholders fit', () => {
    expect(compileInsertBatches(plan)).toEqual([compileInsert(plan)]);
  });

  test('split in row order at the placeholder limit (DEFAULT takes none)', () => {
    expect(compileInsertBatches(plan, 3)).toEqual([
      {
        sql: 'INSERT INTO `order` (`select`, `price`) VALUES (?, ?), (?, DEFAULT)',
        params: ['a', '1', 'b'],
      },
      { sql: 'INSERT INTO `order` (`select`, `price`) VALUES (?, ?)', params: ['c', '3'] },
      { sql: 'INSERT INTO `order` (`select`, `price`) VALUES (?, ?)', params: ['d', '4'] },
    ]);
  });

  test('65,535 placeholders by default', () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => ({
      select: `s${i}`,
      price: i,
      note: 'n',
      größe: i,
      'we`ird': 'w',
      shipped: 1,
      id: i + 1,
    }));
    const statements = compileInsertBatches(planInsert(order, rows));
    expect(statements.map((s) => s.params.length)).toEqual([65_534, 4_466]);
  });
});

describe('compileUpdate', () => {
  test('SET in body order, integer key as a number', () => {
    expect(compileUpdate(planUpdate(order, kv('id,5'), { price: '1.50', note: null }))).toEqual({
      sql: 'UPDATE `order` SET `price` = ?, `note` = ? WHERE `id` = ?',
      params: ['1.5', null, 5],
    });
  });

  test('text key with quotes and commas', () => {
    expect(
      compileUpdate(planUpdate(order, kv("select,'O''Brien, Jo'"), { 'we`ird': 'x' })),
    ).toEqual({
      sql: 'UPDATE `order` SET `we``ird` = ? WHERE `select` = ?',
      params: ['x', "O'Brien, Jo"],
    });
  });

  test('null key → IS NULL', () => {
    expect(compileUpdate(planUpdate(order, kv('note,null'), { note: 'set' }))).toEqual({
      sql: 'UPDATE `order` SET `note` = ? WHERE `note` IS NULL',
      params: ['set'],
    });
  });

  test('integer key beyond 2^53 stays exact (CAST to DECIMAL, as in reads)', () => {
    expect(compileUpdate(planUpdate(order, kv('id,9007199254740993'), { shipped: true }))).toEqual({
      sql: 'UPDATE `order` SET `shipped` = ? WHERE `id` = CAST(? AS DECIMAL(65,30))',
      params: [1, '9007199254740993'],
    });
  });

  test('decimal key', () => {
    expect(compileUpdate(planUpdate(order, kv('price,12.50'), { shipped: 0 }))).toEqual({
      sql: 'UPDATE `order` SET `shipped` = ? WHERE `price` = CAST(? AS DECIMAL(65,30))',
      params: [0, '12.5'],
    });
  });
});

describe('compileDelete', () => {
  test('integer key', () => {
    expect(compileDelete(planDelete(order, kv('id,5')))).toEqual({
      sql: 'DELETE FROM `order` WHERE `id` = ?',
      params: [5],
    });
  });

  test('a bare number is the text of a text key', () => {
    expect(compileDelete(planDelete(order, kv('select,007')))).toEqual({
      sql: 'DELETE FROM `order` WHERE `select` = ?',
      params: ['007'],
    });
  });

  test('null key', () => {
    expect(compileDelete(planDelete(order, kv('größe,NULL')))).toEqual({
      sql: 'DELETE FROM `order` WHERE `größe` IS NULL',
      params: [],
    });
  });

  test('backtick-quoted key with a backtick', () => {
    expect(compileDelete(planDelete(order, kv("`we``ird`,'a'")))).toEqual({
      sql: 'DELETE FROM `order` WHERE `we``ird` = ?',
      params: ['a'],
    });
  });
});
