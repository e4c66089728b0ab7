import { describe, expect, test } from '@jest/globals';
import {
  AnswerCache,
  type CachedAnswer,
  keyReadKey,
  readKey,
} from '../../../src/cache/answer-cache.js';
import { integerKeyText, rowIdentity } from '../../../src/cache/read-tables.js';
import { compileKeyRead, compileRead } from '../../../src/pipeline/read.js';
import { parseKeyRead } from '../../../src/query/key-value.js';
import { addresses, customers, employees, orderItems, orders, products } from '../fixtures/shop.js';

const answer = (text: string): CachedAnswer => ({
  body: Buffer.from(text),
  type: 'application/json; charset=utf-8',
  etag: `"${text}"`,
  total: null,
  link: null,
});

const ALICE = { id: '1', email: 'a@x', role: 'member' };
const BOB = { id: '2', email: 'b@x', role: 'member' };

describe('the tables an answer reads (read-tables.ts)', () => {
  test('the root, a filter path, an $expand both ways, a lambda, $apply, a key read', () => {
    expect(compileRead(orders, {}, null).tables).toEqual(['orders']);
    expect(compileRead(orders, { $filter: "customer/name eq 'x'" }, null).tables).toEqual([
      'customers',
      'orders',
    ]);
    expect(compileRead(customers, { $expand: 'orders($expand=order_items)' }, null).tables).toEqual(
      ['customers', 'order_items', 'orders'],
    );
    expect(
      compileRead(customers, { $filter: 'orders/any(o: o/order_items/any(i: i/line gt 1))' }, null)
        .tables,
    ).toEqual(['customers', 'order_items', 'orders']);
    expect(
      compileRead(
        orders,
        { $expand: "customer($expand=billing_address;$filter=name eq 'x')" },
        null,
      ).tables,
    ).toEqual(['addresses', 'customers', 'orders']);
    expect(
      compileRead(
        orderItems,
        { $apply: "filter(order/customer/name eq 'x')/aggregate($count as n)" },
        null,
      ).tables,
    ).toEqual(['customers', 'order_items', 'orders']);
    expect(compileKeyRead(addresses, parseKeyRead('read(id,1)'), {}, null).tables).toEqual([
      'addresses',
    ]);
  });

  test('the one row of a key read by an integer key that reads nothing else', () => {
    const keyRead = (table: typeof addresses, action: string, query = {}) =>
      compileKeyRead(table, parseKeyRead(action), query, null).row;
    expect(keyRead(addresses, 'read(id,1)')).toBe(rowIdentity('addresses', 'id', '1'));
    expect(keyRead(addresses, 'read(id,1)', { $select: 'city' })).toBe('addresses\u0000id\u00001');
    expect(keyRead(addresses, "read(id,'007')")).toBe('addresses\u0000id\u00007');
    // An $expand (to-one or to-many, of another table or the same one) reads other rows.
    expect(keyRead(orders, 'read(id,1)', { $expand: 'customer' })).toBeNull();
    expect(keyRead(customers, 'read(id,1)', { $expand: 'orders' })).toBeNull();
    expect(keyRead(employees, 'read(id,1)', { $expand: 'manager' })).toBeNull();
    expect(keyRead(employees, 'read(id,1)')).toBe('employees\u0000id\u00001');
    // A text key is compared by its collation: not matched by value.
    expect(keyRead(products, "read(sku,'a')")).toBeNull();
  });

  test('integer text from every form a key comes in', () => {
    expect(['7', '+7', '-0', '007', 7, 7n, '18446744073709551615'].map(integerKeyText)).toEqual([
      '7',
      '7',
      '0',
      '7',
      '7',
      '7',
      '18446744073709551615',
    ]);
    expect([1.5, '1.5', 'x', null, Number.MAX_SAFE_INTEGER + 2, {}].map(integerKeyText)).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
  });

  test('a view among them: never kept', () => {
    const view = { ...addresses, kind: 'view' as const, name: 'address_view' };
    expect(compileRead(view, {}, null).tables).toBeNull();
  });
});

describe('AnswerCache', () => {
  test('kept, found, dropped by any table it read', () => {
    const cache = new AnswerCache(1 << 20, 1 << 10);
    const key = readKey('r', 'orders', false, '$top=5');
    expect(
      cache.keep(cache.ticket(), key, false, null, ['customers', 'orders'], answer('[1]')),
    ).toBe(true);
    expect(cache.get(key, null)?.body.toString()).toBe('[1]');
    cache.drop(['products']);
    expect(cache.get(key, null)).toBeDefined();
    cache.drop(['customers']);
    expect(cache.get(key, null)).toBeUndefined();
    expect([cache.hits, cache.misses, cache.drops, cache.count, cache.bytes]).toEqual([
      2, 1, 1, 0, 0,
    ]);
  });

  test('a read that began before a drop of one of its tables is not kept', () => {
    const cache = new AnswerCache(1 << 20, 1 << 10);
    const key = readKey('r', 'orders', false, '');
    const before = cache.ticket();
    cache.drop(['orders']);
    expect(cache.keep(before, key, false, null, ['orders'], answer('[old]'))).toBe(false);
    // Another table's drop does not matter; a ticket taken after it does.
    const after = cache.ticket();
    cache.drop(['products']);
    expect(cache.keep(after, key, false, null, ['orders'], answer('[new]'))).toBe(true);
  });

  test('a change to one row drops its one-row answers and the table’s others, not other rows’', () => {
    const cache = new AnswerCache(1 << 20, 1 << 10, {
      dependents: (t) => (t === 'orders' ? ['order_items'] : []),
      version: () => 0,
    });
    const one = rowIdentity('orders', 'id', '1');
    const two = rowIdentity('orders', 'id', '2');
    const first = keyReadKey('r', 'orders', false, 'read(id,1)', '');
    const second = keyReadKey('r', 'orders', false, 'read(id,2)', '');
    const page = readKey('r', 'orders', false, '$top=5');
    const items = readKey('r', 'order_items', false, '');
    const keepAll = () => {
      const ticket = cache.ticket();
      cache.keep(ticket, first, false, null, ['orders'], answer('{"id":1}'), one);
      cache.keep(ticket, second, false, null, ['orders'], answer('{"id":2}'), two);
      cache.keep(ticket, page, false, null, ['orders'], answer('[1,2]'));
      cache.keep(ticket, items, false, null, ['order_items'], answer('[]'));
    };
    keepAll();
    const during = cache.ticket();
    cache.dropRows('orders', [one]);
    expect(cache.get(first, null)).toBeUndefined();
    expect(cache.get(second, null)?.body.toString()).toBe('{"id":2}');
    expect(cache.get(page, null)).toBeUndefined();
    // The tables its foreign keys cascade to go whole.
    expect(cache.get(items, null)).toBeUndefined();
    // A read begun before: kept for another row, not for the row changed or the table's pages.
    expect(cache.keep(during, first, false, null, ['orders'], answer('{}'), one)).toBe(false);
    expect(cache.keep(during, page, false, null, ['orders'], answer('[]'))).toBe(false);
    expect(cache.keep(during, second, false, null, ['orders'], answer('{"id":2}'), two)).toBe(true);
    // The table dropped whole (TRUNCATE, a write of unknown rows): every row's answers too.
    keepAll();
    const before = cache.ticket();
    cache.drop(['orders']);
    expect(cache.get(second, null)).toBeUndefined();
    expect(cache.keep(before, second, false, null, ['orders'], answer('{}'), two)).toBe(false);
  });

  test('a table whose foreign keys lead back to it is dropped whole by a row’s change', () => {
    const cache = new AnswerCache(1 << 20, 1 << 10, {
      dependents: (t) => (t === 'employees' ? ['employees'] : []),
      version: () => 0,
    });
    const two = rowIdentity('employees', 'id', '2');
    const key = keyReadKey('r', 'employees', false, 'read(id,2)', '');
    cache.keep(cache.ticket(), key, false, null, ['employees'], answer('{"id":2}'), two);
    cache.dropRows('employees', [rowIdentity('employees', 'id', '1')]);
    expect(cache.get(key, null)).toBeUndefined();
  });

  test('a drop reaches the tables foreign keys cascade to', () => {
    const cache = new AnswerCache(1 << 20, 1 << 10, {
      dependents: (t) => (t === 'customers' ? ['orders', 'order_items'] : []),
      version: () => 0,
    });
    const key = readKey('r', 'order_items', false, '');
    cache.keep(cache.ticket(), key, false, null, ['order_items'], answer('[]'));
    cache.drop(['customers']);
    expect(cache.get(key, null)).toBeUndefined();
  });

  test('the binary-log connection lost: nothing served or kept, emptied when it is back', () => {
    const cache = new AnswerCache(1 << 20, 1 << 10);
    const key = readKey('r', 'orders', false, '');
    cache.keep(cache.ticket(), key, false, null, ['orders'], answer('[1]'));
    const during = cache.ticket();
    cache.setLive(false);
    expect(cache.get(key, null)).toBeUndefined();
    expect(cache.keep(cache.ticket(), key, false, null, ['orders'], answer('[2]'))).toBe(false);
    cache.setLive(true);
    // A read that began before the connection went is not kept after it came back.
    expect(cache.keep(during, key, false, null, ['orders'], answer('[3]'))).toBe(false);
    expect(cache.get(key, null)).toBeUndefined();
  });

  test('a schema read that found changes empties it', () => {
    let version = 1;
    const cache = new AnswerCache(1 << 20, 1 << 10, {
      dependents: () => [],
      version: () => version,
    });
    const key = readKey('r', 'orders', false, '');
    const ticket = cache.ticket();
    cache.keep(ticket, key, false, null, ['orders'], answer('[1]'));
    version = 2;
    expect(cache.get(key, null)).toBeUndefined();
    expect(cache.keep(ticket, key, false, null, ['orders'], answer('[1]'))).toBe(false);
  });

  test('@user values: one entry per user when the read binds them, one for all otherwise', () => {
    const cache = new AnswerCache(1 << 20, 1 << 10);
    const bound = readKey('member', 'books', false, '');
    cache.keep(cache.ticket(), bound, true, ALICE, ['books'], answer('[alice]'));
    cache.keep(cache.ticket(), bound, true, BOB, ['books'], answer('[bob]'));
    expect(cache.get(bound, ALICE)?.body.toString()).toBe('[alice]');
    expect(cache.get(bound, BOB)?.body.toString()).toBe('[bob]');
    expect(cache.get(bound, { ...BOB, id: '3' })).toBeUndefined();
    expect(cache.get(bound, null)).toBeUndefined();
    const free = readKey('member', 'authors', false, '');
    cache.keep(cache.ticket(), free, false, ALICE, ['authors'], answer('[all]'));
    expect(cache.get(free, BOB)?.body.toString()).toBe('[all]');
  });

  test('bounded by bytes, an entry asked for since the hand passed spared once; an entry past the bound never kept', () => {
    const body = 'x'.repeat(1000);
    const key = (n: number) => readKey('r', 't', false, String(n));
    // An entry costs its body, its key (2 bytes a character) and 320.
    const each = 1000 + key(0).length * 2 + 320;
    const cache = new AnswerCache(each * 3, 2000);
    for (const n of [1, 2, 3]) cache.keep(cache.ticket(), key(n), false, null, ['t'], answer(body));
    expect(cache.bytes).toBe(each * 3);
    cache.get(key(1), null);
    cache.keep(cache.ticket(), key(4), false, null, ['t'], answer(body));
    expect([1, 2, 3, 4].map((n) => cache.get(key(n), null) !== undefined)).toEqual([
      true,
      false,
      true,
      true,
    ]);
    expect(cache.bytes).toBe(each * 3);
    expect(cache.keep(cache.ticket(), key(5), false, null, ['t'], answer('y'.repeat(2001)))).toBe(
      false,
    );
    cache.drop(['t']);
    expect([cache.count, cache.bytes]).toEqual([0, 0]);
  });

  test('SIEVE: the hand spares the entries asked for and takes the first one not; it goes on from there', () => {
    const key = (n: number) => readKey('r', 't', false, String(n));
    const each = 1000 + key(0).length * 2 + 320;
    const cache = new AnswerCache(each * 4, 2000);
    const keep = (n: number) =>
      cache.keep(cache.ticket(), key(n), false, null, ['t'], answer('x'.repeat(1000)));
    const kept = () => [1, 2, 3, 4, 5, 6, 7].filter((n) => cache.get(key(n), null) !== undefined);
    for (const n of [1, 2, 3, 4]) keep(n);
    // 1 and 2 asked for, 3 not: 3 goes (least-recently-used would take 3 too, then 4).
    cache.get(key(1), null);
    cache.get(key(2), null);
    keep(5);
    // The hand is past 1 and 2 (their marks cleared) and at 3's place: 4 goes next.
    keep(6);
    // kept() asks for every entry, so it runs last.
    expect(kept()).toEqual([1, 2, 5, 6]);
    // Everything was just asked for. The hand goes on from 4's place: it spares 5 and 6 (their
    // marks cleared), passes 7 (the entry being kept is never taken), starts again at the
    // oldest, spares 1 and 2, and takes 5.
    keep(7);
    expect(kept()).toEqual([1, 2, 6, 7]);
  });
});
