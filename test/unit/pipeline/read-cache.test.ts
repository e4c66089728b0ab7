import { describe, expect, test } from '@jest/globals';
import type { TableInfo } from '../../../src/db/schema-types.js';
import { READ_CACHE_ENTRIES, READ_CACHE_MAX_QUERY_CHARS } from '../../../src/limits.js';
import {
  bindRead,
  type CompiledRead,
  compileRead,
  compileReadPlan,
} from '../../../src/pipeline/read.js';
import { ReadCache, rawQueryString } from '../../../src/pipeline/read-cache.js';
import { planRead } from '../../../src/plan/read-plan.js';
import { validatePolicy } from '../../../src/policy/policy.js';
import type { Access } from '../../../src/policy/views.js';
import { parseReadOptions } from '../../../src/query/options.js';
import { compileCount, compileSelect } from '../../../src/sql/compile-read.js';
import { column, order, table } from '../fixtures/schema.js';

const plan = (query: Record<string, string>, on = order) => planRead(parseReadOptions(query), on);
const made = (query: Record<string, string>, on = order) => compileReadPlan(plan(query, on));

/** Adds the read twice (a query string is kept on its second sight); gives back the read. */
function keep(cache: ReadCache, query: string, read: CompiledRead, on: TableInfo = order) {
  cache.add(on, '', query, read);
  cache.add(on, '', query, read);
  return read;
}

describe('rawQueryString: the query string as the router splits it off', () => {
  test.each([
    ['/table/t/read', ''],
    ['/table/t/read?', ''],
    ['/table/t/read?$top=1', '$top=1'],
    ['/table/t/read?$top=1?$skip=2', '$top=1?$skip=2'],
    ['/table/t/read?$top=1#x', '$top=1#x'],
    ['/table/t/read#$top=1', '$top=1'],
    ['/table/t/read#?$top=1', '?$top=1'],
    ['/table/t/read?$top=1;$skip=2', '$top=1;$skip=2'],
    ['/table/%74/read?$top=1', '$top=1'],
  ])('%s → %s', (url, query) => {
    expect(rawQueryString(url)).toBe(query);
  });

  test('an absolute-form URL is not cached', () => {
    expect(rawQueryString('http://host/table/t/read?$top=1')).toBeNull();
  });

  test(`a query string over ${READ_CACHE_MAX_QUERY_CHARS} characters is not cached`, () => {
    const at = 'x'.repeat(READ_CACHE_MAX_QUERY_CHARS);
    expect(rawQueryString(`/t?${at}`)).toBe(at);
    expect(rawQueryString(`/t?${at}x`)).toBeNull();
    expect(rawQueryString(`/t#${at}x`)).toBeNull();
  });
});

describe('ReadCache', () => {
  test('an entry is found only for the very table object its plan was made against', () => {
    const cache = new ReadCache();
    const entry = keep(cache, '$top=1', made({ $top: '1' }));
    expect(cache.get(order, '', '$top=1')).toBe(entry);
    expect(cache.get(order, '', '$top=2')).toBeUndefined();
    // A schema re-read makes a new table object with the same name.
    const reread = table('order', order.columns, order.primaryKey);
    expect(cache.get(reread, '', '$top=1')).toBeUndefined();
    // Another table with the same query string has its own entry.
    const other = table('other', order.columns, order.primaryKey);
    expect(cache.get(other, '', '$top=1')).toBeUndefined();
    const otherEntry = keep(cache, '$top=1', made({ $top: '1' }, other), other);
    expect(cache.get(other, '', '$top=1')).toBe(otherEntry);
    expect(cache.get(order, '', '$top=1')).toBe(entry);
  });

  test(`never holds more than READ_CACHE_ENTRIES (${READ_CACHE_ENTRIES}); the least recently used goes first`, () => {
    const cache = new ReadCache();
    const hot = keep(cache, '$top=0', made({ $top: '0' }));
    for (let i = 1; i <= 3 * READ_CACHE_ENTRIES; i++) {
      keep(cache, `$top=${i}`, made({ $top: String(i) }));
      expect(cache.get(order, '', '$top=0')).toBe(hot); // kept warm
      expect(cache.size).toBeLessThanOrEqual(READ_CACHE_ENTRIES);
    }
    expect(cache.size).toBe(READ_CACHE_ENTRIES);
    expect(cache.get(order, '', '$top=1')).toBeUndefined();
    expect(cache.get(order, '', `$top=${3 * READ_CACHE_ENTRIES}`)).toBeDefined();
  });

  test('a query string is kept on its second sight, not its first', () => {
    const cache = new ReadCache();
    const first = made({ $skip: '1' });
    cache.add(order, '', '$skip=1', first);
    expect(cache.get(order, '', '$skip=1')).toBeUndefined();
    expect(cache.size).toBe(0);
    const second = made({ $skip: '1' });
    cache.add(order, '', '$skip=1', second);
    expect(cache.get(order, '', '$skip=1')).toBe(second);
    // Only a kept read is known as one query string's own (its Link is kept with it).
    expect(cache.isKept(first)).toBe(false);
    expect(cache.isKept(second)).toBe(true);
    // Seen once for another table: not the same query string.
    const other = table('other', order.columns, order.primaryKey);
    cache.add(order, '', '$skip=2', made({ $skip: '2' }));
    cache.add(other, '', '$skip=2', made({ $skip: '2' }, other));
    expect(cache.get(other, '', '$skip=2')).toBeUndefined();
    // Nor for another role.
    cache.add(order, 'a', '$skip=3', made({ $skip: '3' }));
    cache.add(order, 'b', '$skip=3', made({ $skip: '3' }));
    expect(cache.get(order, 'b', '$skip=3')).toBeUndefined();
  });

  test('a stream of distinct query strings keeps (almost) none', () => {
    const cache = new ReadCache();
    const read = made({ $skip: '1' });
    for (let i = 0; i < 10_000; i++) cache.add(order, '', `$skip=${i}`, read);
    expect(cache.size).toBeLessThan(10); // hash collisions only
  });

  test('a small cache holds its own bound', () => {
    const cache = new ReadCache(3);
    for (let i = 0; i < 10; i++) keep(cache, `$skip=${i}`, made({ $skip: String(i) }));
    expect(cache.size).toBe(3);
  });

  // get() skips the LRU when no entry kept falls in the query's slot: the counts must follow
  // every eviction and replacement, or a kept entry would be missed.
  test('every entry kept is found, through evictions, replacements and shared slots', () => {
    const cache = new ReadCache(4, 2);
    const reread = table(order.name, order.columns, order.primaryKey);
    for (let i = 0; i < 40; i++) {
      const query = `$skip=${i % 7}`;
      const on = i % 3 === 0 ? reread : order; // a re-read table replaces the entry
      const entry = keep(cache, query, made({ $skip: String(i % 7) }, on), on);
      keep(cache, query, made({ $skip: String(i % 7) }, on), on); // and so does the same read again
      expect(cache.get(on, '', query)?.select.params).toEqual(entry.select.params);
      expect(cache.size).toBeLessThanOrEqual(4);
    }
    const found = [0, 1, 2, 3, 4, 5, 6].filter(
      (k) => cache.get(order, '', `$skip=${k}`) ?? cache.get(reread, '', `$skip=${k}`),
    );
    expect(found).toHaveLength(4); // the four kept last, none lost to a miscount
  });
});

describe('compileReadPlan', () => {
  test('the queries, serializer and path of the plan', () => {
    const planned = plan({ $filter: "select eq 'a'", $count: 'true', $top: '5' });
    const read = compileReadPlan(planned);
    expect(read.select).toEqual(compileSelect(planned));
    expect(read.count).toEqual(compileCount(planned));
    expect(read.namesUser).toBe(false);
  });

  test('no count query without $count', () => {
    expect(compileReadPlan(plan({ $top: '1' })).count).toBeNull();
  });

  test('a number out of range: the SELECT and the COUNT refuse with the same error', () => {
    const planned = plan({ $filter: 'id eq 1e400 or id eq 2e400', $count: 'true' });
    const countError = (() => {
      try {
        compileCount(planned);
      } catch (error) {
        return error;
      }
    })();
    expect(countError).toBeInstanceOf(Error);
    expect(() => compileSelect(planned)).toThrow(countError as Error);
    expect(() => compileReadPlan(planned)).toThrow(countError as Error);
  });
});

describe('compileRead under a policy', () => {
  const text = (name: string) =>
    column(name, { dataType: 'varchar', columnType: 'varchar(20)', kind: 'string', maxLength: 20 });
  const orders = table(
    'orders',
    [column('id'), column('customer_id'), text('status'), text('note')],
    ['id'],
  );
  const schema: ReadonlyMap<string, TableInfo> = new Map([['orders', orders]]);
  const policy = validatePolicy(
    {
      roles: {
        everything: { tables: { orders: { read: true } } },
        open: { tables: { orders: { read: { where: "status eq 'open'" } } } },
        narrow: { tables: { orders: { read: { columns: ['id', 'status'] } } } },
        both: { tables: { orders: { read: { where: 'id gt 2', columns: ['id', 'status'] } } } },
        own: { tables: { orders: { read: { where: 'customer_id eq @user.id' } } } },
      },
    },
    schema,
  );
  const as = (role: string, id: string): Access => ({
    policy,
    role,
    user: { id, email: `${id}@x.org`, role },
  });
  const query = { $filter: "status ne 'x'", $orderby: 'id', $top: '5', $count: 'true' };

  test.each(['everything', 'open', 'narrow', 'both', 'own'])(
    '%s: the same compiled read for every caller of the role',
    (role) => {
      const first = compileRead(orders, query, as(role, '1'));
      for (const id of ['2', '1']) {
        const read = compileRead(orders, query, as(role, id));
        expect(read.select).toEqual(first.select);
        expect(read.count).toEqual(first.count);
        expect(read.small).toBe(first.small);
        expect(read.serialize([1, 2, 3, 4])).toBe(first.serialize([1, 2, 3, 4]));
      }
    },
  );

  test('a where with @user names the caller only once bound, per request', () => {
    const read = compileRead(orders, query, as('own', '1'));
    expect(read.namesUser).toBe(true);
    const one = bindRead(read, as('own', '1'));
    const two = bindRead(read, as('own', '2'));
    expect(one.select.params).not.toEqual(two.select.params);
    expect(one.select.params).toContain('1');
    expect(two.count?.params).toContain('2');
    // A role without @user is answered as it is.
    const open = compileRead(orders, query, as('open', '1'));
    expect(bindRead(open, as('open', '1'))).toBe(open);
  });
});
