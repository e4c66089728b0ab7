/**
 * Paged reads, compiled: the order with its tie-breaker, the seek of a `$skiptoken` read as exact
 * SQL and parameters (markers for the token's values, bound per request), the sort keys' slots,
 * and each type's value from a row to a token to a parameter.
 */
import { describe, expect, test } from '@jest/globals';
import mysql from 'mysql2';
import type { ColumnInfo, Relation, TableInfo } from '../../../src/db/schema-types.js';
import { planRead, type ReadPlan } from '../../../src/plan/read-plan.js';
import { parseReadOptions, type QueryObject } from '../../../src/query/options.js';
import { compileCount, compileSelect, pageKeySlots } from '../../../src/sql/compile-read.js';
import {
  bindSeek,
  keyParameter,
  SKIP_SLOT,
  seekSlot,
  seekValueOf,
} from '../../../src/sql/compile-seek.js';
import { column, events, id, order, table, text } from '../fixtures/schema.js';

const { TypedParameter } = mysql;

const K0 = seekSlot(0);
const K1 = seekSlot(1);
const K2 = seekSlot(2);

const planOf = (query: QueryObject, on: TableInfo = order): ReadPlan =>
  planRead(parseReadOptions(query), on);
const read = (query: QueryObject, on: TableInfo = order) => compileSelect(planOf(query, on));

// A composite primary key, an ENUM, and a table without a primary key.
const k1 = column('k1');
const k2 = text('k2', { columnType: 'varchar(10)', maxLength: 10 });
const state = text('state', {
  dataType: 'enum',
  columnType: "enum('new','done')",
  maxLength: 4,
  nullable: true,
});
const pairs = table('pairs', [k1, k2, state], ['k1', 'k2']);
const loose = table('loose', [text('a'), text('b', { nullable: true })]);

// orders.customer_id → customers.id: the to-one relation `customer`.
const customerName = text('name');
const customers = table('customers', [id, customerName], ['id']);
const customerId = column('customer_id', { nullable: true });
const orders: TableInfo = (() => {
  const made = table('orders', [id, customerId], ['id']);
  const relation: Relation = {
    name: 'customer',
    kind: 'one',
    key: 'orders_customer',
    target: customers,
    on: [{ local: customerId, remote: id }],
  };
  return { ...made, relations: new Map([['customer', relation]]) };
})();

describe('the order of a paged read', () => {
  test.each<[string, QueryObject, string]>([
    ['$top alone: the primary key', { $select: 'id', $top: '5' }, '`id` ASC'],
    [
      'the key follows the last item, in its direction',
      { $select: 'id', $orderby: 'select desc', $top: '5' },
      '`select` DESC, `id` DESC',
    ],
    [
      'a key already ordered is not added',
      { $select: 'id', $orderby: 'id desc,select', $top: '5' },
      '`id` DESC, `select` ASC',
    ],
    [
      'a column named again is dropped (its first place decides)',
      { $select: 'id', $orderby: 'select,select desc', $top: '5' },
      '`select` ASC, `id` ASC',
    ],
    [
      'every column of a composite key',
      { $select: 'k1', $orderby: 'k2 desc', $top: '5' },
      '`k2` DESC, `k1` DESC',
    ],
  ])('%s', (_name, query, orderBy) => {
    const on = query.$select === 'k1' ? pairs : order;
    expect(read(query, on).sql).toMatch(new RegExp(` ORDER BY ${literally(orderBy)} LIMIT \\?$`));
  });

  test('without $top or $skiptoken nothing is added', () => {
    expect(read({ $select: 'id', $orderby: 'select' }).sql).toBe(
      'SELECT `id` FROM `order` ORDER BY `select` ASC',
    );
  });

  test('a table without a primary key keeps its order: pages follow by count', () => {
    expect(read({ $orderby: 'a', $top: '2', $skiptoken: 't' }, loose)).toEqual({
      sql: 'SELECT `a`, `b` FROM `loose` ORDER BY `a` ASC LIMIT ? OFFSET ?',
      params: ['2', SKIP_SLOT],
    });
    expect(planOf({ $top: '2' }, loose).page).toEqual({ keys: null, continues: false });
  });

  test('a JSON sort key pages by count', () => {
    expect(read({ $select: 'id', $orderby: 'doc', $top: '2', $skiptoken: 't' }, events)).toEqual({
      sql: 'SELECT `id` FROM `events` ORDER BY `doc` ASC LIMIT ? OFFSET ?',
      params: ['2', SKIP_SLOT],
    });
  });

  test('$count ignores the position', () => {
    const plan = planOf({ $filter: 'id gt 3', $top: '2', $skiptoken: 't', $count: 'true' });
    expect(compileCount(plan)).toEqual({
      sql: 'SELECT COUNT(*) FROM `order` WHERE `id` > ?',
      params: [3],
    });
  });
});

describe('the seek of a $skiptoken read', () => {
  test.each<[string, QueryObject, TableInfo, string, unknown[]]>([
    [
      'the primary key alone',
      { $select: 'id', $top: '10', $skiptoken: 't' },
      order,
      'SELECT `id` FROM `order` WHERE (`id` > ?) ORDER BY `id` ASC LIMIT ? OFFSET ?',
      [K0, '10', SKIP_SLOT],
    ],
    [
      'after the filter, ANDed',
      { $select: 'id', $filter: 'price gt 5 or id eq 1', $top: '10', $skiptoken: 't' },
      order,
      'SELECT `id` FROM `order` WHERE (`price` > ? OR `id` = ?) AND (`id` > ?) ORDER BY `id` ASC LIMIT ? OFFSET ?',
      [5, 1, K0, '10', SKIP_SLOT],
    ],
    [
      'without $top: every row after the position',
      { $select: 'id', $skiptoken: 't' },
      order,
      'SELECT `id` FROM `order` WHERE (`id` > ?) ORDER BY `id` ASC LIMIT 18446744073709551615 OFFSET ?',
      [K0, SKIP_SLOT],
    ],
    [
      'two keys, mixed directions, exact DECIMAL',
      { $select: 'id', $orderby: 'select,price desc', $top: '3', $skiptoken: 't' },
      order,
      'SELECT `id`, `select`, `price` FROM `order` WHERE (`select` > ? OR (`select` = ? AND (`price` < CAST(? AS DECIMAL(10,2)) OR (`price` = CAST(? AS DECIMAL(10,2)) AND (`id` < ?))))) ORDER BY `select` ASC, `price` DESC, `id` DESC LIMIT ? OFFSET ?',
      [K0, K0, K1, K1, K2, '3', SKIP_SLOT],
    ],
    [
      'a nullable key ascending: NULL first, so after NULL come all values',
      { $select: 'id', $orderby: 'note', $top: '3', $skiptoken: 't' },
      order,
      'SELECT `id`, `note` FROM `order` WHERE ((`note` > ? OR (? IS NULL AND `note` IS NOT NULL)) OR (`note` <=> ? AND (`id` > ?))) ORDER BY `note` ASC, `id` ASC LIMIT ? OFFSET ?',
      [K0, K0, K0, K1, '3', SKIP_SLOT],
    ],
    [
      'a nullable key descending: NULL last, so after a value comes NULL too',
      { $select: 'id', $orderby: 'note desc', $top: '3', $skiptoken: 't' },
      order,
      'SELECT `id`, `note` FROM `order` WHERE ((`note` < ? OR (? IS NOT NULL AND `note` IS NULL)) OR (`note` <=> ? AND (`id` < ?))) ORDER BY `note` DESC, `id` DESC LIMIT ? OFFSET ?',
      [K0, K0, K0, K1, '3', SKIP_SLOT],
    ],
    [
      'dates, datetimes and times as the filter compiler casts them',
      { $select: 'id', $orderby: 'day,at,clock', $top: '3', $skiptoken: 't' },
      events,
      'SELECT `id`, `day`, `at`, `clock` FROM `events` WHERE ((`day` > CAST(? AS DATE) OR (? IS NULL AND `day` IS NOT NULL)) OR (`day` <=> CAST(? AS DATE) AND ((`at` > CAST(? AS DATETIME(6)) OR (? IS NULL AND `at` IS NOT NULL)) OR (`at` <=> CAST(? AS DATETIME(6)) AND ((`clock` > CAST(? AS TIME(6)) OR (? IS NULL AND `clock` IS NOT NULL)) OR (`clock` <=> CAST(? AS TIME(6)) AND (`id` > ?))))))) ORDER BY `day` ASC, `at` ASC, `clock` ASC, `id` ASC LIMIT ? OFFSET ?',
      [K0, K0, K0, K1, K1, K1, K2, K2, K2, seekSlot(3), '3', SKIP_SLOT],
    ],
    [
      'a composite primary key, an ENUM by its number (read as + 0, compared as the column)',
      { $select: 'k2', $orderby: 'state desc', $top: '3', $skiptoken: 't' },
      pairs,
      'SELECT `k2`, `state` + 0, `k1` FROM `pairs` WHERE ((`state` < ? OR (? IS NOT NULL AND `state` IS NULL)) OR (`state` <=> ? AND (`k1` < ? OR (`k1` = ? AND (`k2` < ?))))) ORDER BY `state` DESC, `k1` DESC, `k2` DESC LIMIT ? OFFSET ?',
      [K0, K0, K0, K1, K1, K2, '3', SKIP_SLOT],
    ],
    [
      'a key through a to-one relation can be NULL (no related row) whatever its column says',
      { $select: 'id', $orderby: 'customer/name', $top: '3', $skiptoken: 't' },
      orders,
      'SELECT `t0`.`id`, `t1`.`name` FROM `orders` AS `t0` LEFT JOIN `customers` AS `t1` ON `t1`.`id` = `t0`.`customer_id` WHERE ((`t1`.`name` > ? OR (? IS NULL AND `t1`.`name` IS NOT NULL)) OR (`t1`.`name` <=> ? AND (`t0`.`id` > ?))) ORDER BY `t1`.`name` ASC, `t0`.`id` ASC LIMIT ? OFFSET ?',
      [K0, K0, K0, K1, '3', SKIP_SLOT],
    ],
  ])('%s', (_name, query, on, sql, params) => {
    expect(read(query, on)).toEqual({ sql, params });
  });

  test('bindSeek puts the values and the count in; the text never changes', () => {
    const compiled = read({ $select: 'id', $orderby: 'select', $top: '3', $skiptoken: 't' });
    expect(bindSeek(compiled, ["O'Brien", 7], 2)).toEqual({
      sql: compiled.sql,
      params: ["O'Brien", "O'Brien", 7, '3', '2'],
    });
  });
});

describe('pageKeySlots: where each sort key is in a row', () => {
  test('a selected column is read where it is; others are added after the selection', () => {
    const slots = pageKeySlots(planOf({ $select: 'note,id', $orderby: 'price', $top: '2' }));
    expect(slots?.map(({ slot, added, key }) => [key.expr.column.name, slot, added])).toEqual([
      ['price', 2, true],
      ['id', 1, false],
    ]);
    expect(read({ $select: 'note,id', $orderby: 'price', $top: '2' }).sql).toBe(
      'SELECT `note`, `id`, `price` FROM `order` ORDER BY `price` ASC, `id` ASC LIMIT ?',
    );
  });

  test('an expanded object takes its marker and its columns before the added keys', () => {
    const query = { $select: 'id', $expand: 'customer', $orderby: 'customer/name', $top: '2' };
    const slots = pageKeySlots(planOf(query, orders));
    // id, the customer marker, customer.id, customer.name, then the key customer/name.
    expect(slots?.map(({ slot }) => slot)).toEqual([4, 0]);
  });

  test('none without a page, or when pages follow by count', () => {
    expect(pageKeySlots(planOf({ $select: 'id' }))).toBeNull();
    expect(pageKeySlots(planOf({ $top: '2' }, loose))).toBeNull();
  });
});

describe('sort key values: row → token → parameter, exactly', () => {
  const bigint = column('b', { dataType: 'bigint', columnType: 'bigint(20)' });
  const ubig = column('u', {
    dataType: 'bigint',
    columnType: 'bigint(20) unsigned',
    unsigned: true,
  });
  const decimal = column('d', {
    dataType: 'decimal',
    columnType: 'decimal(65,0)',
    kind: 'decimal',
    numericPrecision: 65,
    numericScale: 0,
  });
  const float = column('f', { dataType: 'float', columnType: 'float', kind: 'float' });
  const datetime = column('t', {
    dataType: 'datetime',
    columnType: 'datetime(6)',
    kind: 'datetime',
  });
  const time = text('c', { dataType: 'time', columnType: 'time(3)' });
  const binary = column('y', { dataType: 'varbinary', columnType: 'varbinary(8)', kind: 'binary' });
  const bit = column('z', { dataType: 'bit', columnType: 'bit(64)', kind: 'bit' });

  test.each<[string, ColumnInfo, unknown, unknown, unknown]>([
    ['INT', id, 42, '42', TypedParameter.BIGINT.unsigned('42')],
    [
      'BIGINT beyond 2^53',
      bigint,
      '-9223372036854775808',
      '-9223372036854775808',
      TypedParameter.BIGINT('-9223372036854775808'),
    ],
    [
      'BIGINT UNSIGNED at its largest',
      ubig,
      '18446744073709551615',
      '18446744073709551615',
      TypedParameter.BIGINT.unsigned('18446744073709551615'),
    ],
    [
      'DECIMAL(65,0) with every digit',
      decimal,
      '12345678901234567890123456789012345678901234567890123456789012345',
      '12345678901234567890123456789012345678901234567890123456789012345',
      '12345678901234567890123456789012345678901234567890123456789012345',
    ],
    [
      'FLOAT widened to the double the driver reads',
      float,
      1.100000023841858,
      1.100000023841858,
      1.100000023841858,
    ],
    [
      'DATETIME(6)',
      datetime,
      '1999-12-31 23:59:59.000001',
      '1999-12-31 23:59:59.000001',
      '1999-12-31 23:59:59.000001',
    ],
    ['TIME, negative', time, '-838:59:59.000', '-838:59:59.000', '-838:59:59.000'],
    ['binary bytes', binary, Buffer.from([0, 255, 16]), 'AP8Q', Buffer.from([0, 255, 16])],
    [
      'BIT(64) as its number',
      bit,
      Buffer.from('ffffffffffffffff', 'hex'),
      '18446744073709551615',
      TypedParameter.BIGINT.unsigned('18446744073709551615'),
    ],
    ['an ENUM by its number', state, 2, '2', TypedParameter.BIGINT.unsigned('2')],
    ['NULL', datetime, null, null, null],
  ])('%s', (_name, info, driverValue, tokenValue, parameter) => {
    const kept = seekValueOf(info, driverValue);
    expect(kept).toEqual(tokenValue);
    // Through the token's JSON and back.
    const back = JSON.parse(JSON.stringify(kept));
    expect(keyParameter(info, back)).toEqual(parameter);
  });

  test.each<[string, ColumnInfo, unknown]>([
    ['text for an integer', id, 'x1'],
    ['a number for an integer (tokens keep integers as text)', id, 1],
    ['text for a FLOAT', float, '1.5'],
    ['a DECIMAL with an exponent', decimal, '1e5'],
    ['a date with letters', datetime, '2024-01-01T10:00:00Z'],
    ['bytes that are not base64', binary, 'a b'],
    ['a number for text', k2, 5],
  ])('a value that is not the column’s: %s', (_name, info, value) => {
    expect(keyParameter(info, value as never)).toBeUndefined();
  });
});

function literally(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
