import { describe, expect, test } from '@jest/globals';
import { planCallBody, planCallQuery } from '../../../src/plan/call-plan.js';
import { castTarget, compileCall } from '../../../src/sql/compile-call.js';
import {
  balance,
  fn,
  parameter,
  placeOrder,
  procedure,
  report,
  weird,
} from '../fixtures/routines.js';
import { column } from '../fixtures/schema.js';

describe('compileCall', () => {
  test('IN values are placeholders; OUT and INOUT go through variables, INOUT ones set first', () => {
    const plan = planCallBody(placeOrder, { customer: 7, note: "it's", stock: 3 });
    expect(compileCall('shop', placeOrder, plan.inputs)).toEqual({
      seed: { sql: 'SET @tablegate_p4 = ?', params: [3] },
      call: {
        sql: 'CALL `shop`.`place_order`(?, ?, @tablegate_p3, @tablegate_p4)',
        params: [7, "it's"],
      },
      outs: {
        sql: 'SELECT CAST(@tablegate_p3 AS DECIMAL(10,2)), CAST(@tablegate_p4 AS SIGNED)',
        params: [],
      },
      clear: { sql: 'SET @tablegate_p3 = NULL, @tablegate_p4 = NULL', params: [] },
    });
  });

  test('no parameters: the CALL alone', () => {
    expect(compileCall('shop', report, [])).toEqual({
      seed: null,
      call: { sql: 'CALL `shop`.`report`()', params: [] },
      outs: null,
      clear: null,
    });
  });

  test('a function is a SELECT of it, qualified (a built-in of the same name would win)', () => {
    const plan = planCallQuery(balance, { customer: '3', day: '2024-01-31' });
    expect(compileCall('shop', balance, plan.inputs)).toEqual({
      seed: null,
      call: { sql: 'SELECT `shop`.`balance`(?, ?)', params: [3, '2024-01-31'] },
      outs: null,
      clear: null,
    });
    expect(compileCall('shop', fn('now', {}), []).call.sql).toBe('SELECT `shop`.`now`()');
  });

  test('names are quoted, values are never in the text', () => {
    const plan = planCallBody(weird, { 'p`q': "'); DROP TABLE t; --" });
    expect(compileCall('my`db', weird, plan.inputs)).toEqual({
      seed: null,
      call: { sql: 'CALL `my``db`.`we"ird``name`(?)', params: ["'); DROP TABLE t; --"] },
      outs: null,
      clear: null,
    });
  });

  test('OUT only: nothing to set first, NULL where nothing was sent', () => {
    const only = procedure('only_out', [parameter('a', 'out'), parameter('b', 'in')]);
    expect(compileCall('d', only, [null])).toEqual({
      seed: null,
      call: { sql: 'CALL `d`.`only_out`(@tablegate_p1, ?)', params: [null] },
      outs: { sql: 'SELECT CAST(@tablegate_p1 AS SIGNED)', params: [] },
      clear: { sql: 'SET @tablegate_p1 = NULL', params: [] },
    });
  });
});

describe('castTarget: a variable back in its parameter’s declared type', () => {
  const t = (type: Parameters<typeof column>[1]) => castTarget(column('x', type));
  test.each([
    ['int', t({}), 'SIGNED'],
    ['bigint unsigned', t({ dataType: 'bigint', unsigned: true }), 'UNSIGNED'],
    [
      'decimal(12,4)',
      t({ dataType: 'decimal', kind: 'decimal', numericPrecision: 12, numericScale: 4 }),
      'DECIMAL(12,4)',
    ],
    [
      'decimal with a hostile precision',
      t({ dataType: 'decimal', kind: 'decimal', numericPrecision: 1e9, numericScale: -1 }),
      'DECIMAL(65,0)',
    ],
    ['date', t({ dataType: 'date', columnType: 'date', kind: 'date' }), 'DATE'],
    ['datetime', t({ dataType: 'datetime', columnType: 'datetime', kind: 'datetime' }), 'DATETIME'],
    [
      'datetime(3)',
      t({ dataType: 'datetime', columnType: 'datetime(3)', kind: 'datetime' }),
      'DATETIME(3)',
    ],
    [
      'timestamp(6)',
      t({ dataType: 'timestamp', columnType: 'timestamp(6)', kind: 'datetime' }),
      'DATETIME(6)',
    ],
    ['time(2)', t({ dataType: 'time', columnType: 'time(2)', kind: 'string' }), 'TIME(2)'],
    ['time', t({ dataType: 'time', columnType: 'time', kind: 'string' }), 'TIME'],
    ['varbinary', t({ dataType: 'varbinary', kind: 'binary' }), 'BINARY'],
    ['json (MySQL)', t({ dataType: 'json', kind: 'json' }), 'JSON'],
    ['varchar', t({ dataType: 'varchar', kind: 'string' }), null],
    ['float', t({ dataType: 'float', kind: 'float' }), null],
    ['year', t({ dataType: 'year', kind: 'year' }), null],
    ['bit', t({ dataType: 'bit', kind: 'bit' }), null],
  ])('%s → %s', (_type, target, expected) => {
    expect(target).toBe(expected);
  });
});
