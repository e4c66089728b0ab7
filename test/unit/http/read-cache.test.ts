import { describe, expect, test } from '@jest/globals';
import type { TableInfo } from '../../../src/db/schema-types.js';
import {
  compiledRead,
  compileReadPlan,
  ReadCache,
  rawQueryString,
} from '../../../src/http/read-cache.js';
import { READ_CACHE_ENTRIES, READ_CACHE_MAX_QUERY_CHARS } from '../../../src/limits.js';
import { planRead } from '../../../src/plan/read-plan.js';
import { validatePolicy } from '../../../src/policy/policy.js';
import { type Access, guardRead, userIndependentReadGrant } from '../../../src/policy/stage.js';
import { parseReadOptions } from '../../../src/query/options.js';
import { compileCount, compileRead } from '../../../src/sql/compile-read.js';
import { column, order, table } from '../fixtures/schema.js';

const plan = (query: Record<string, string>, on = order) => planRead(parseReadOptions(query), on);

/** Adds the plan twice: a query string is kept on its second sight. */
function keep(cache: ReadCache, query: string, planned: ReturnType<typeof plan>) {
  cache.add(query, planned);
  return cache.add(query, planned);
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
    const entry = keep(cache, '$top=1', plan({ $top: '1' }));
    expect(cache.get(order, '$top=1')).toBe(entry);
    expect(cache.get(order, '$top=2')).toBeUndefined();
    // A schema re-read makes a new table object with the same name.
    const reread = table('order', order.columns, order.primaryKey);
    expect(cache.get(reread, '$top=1')).toBeUndefined();
    // Another table with the same query string has its own entry.
    const other = table('other', order.columns, order.primaryKey);
    expect(cache.get(other, '$top=1')).toBeUndefined();
    const otherEntry = keep(cache, '$top=1', plan({ $top: '1' }, other));
    expect(cache.get(other, '$top=1')).toBe(otherEntry);
    expect(cache.get(order, '$top=1')).toBe(entry);
  });

  test(`never holds more than READ_CACHE_ENTRIES (${READ_CACHE_ENTRIES}); the least recently used goes first`, () => {
    const cache = new ReadCache();
    const hot = keep(cache, '$top=0', plan({ $top: '0' }));
    for (let i = 1; i <= 3 * READ_CACHE_ENTRIES; i++) {
      keep(cache, `$top=${i}`, plan({ $top: String(i) }));
      expect(cache.get(order, '$top=0')).toBe(hot); // kept warm
      expect(cache.size).toBeLessThanOrEqual(READ_CACHE_ENTRIES);
    }
    expect(cache.size).toBe(READ_CACHE_ENTRIES);
    expect(cache.get(order, '$top=1')).toBeUndefined();
    expect(cache.get(order, `$top=${3 * READ_CACHE_ENTRIES}`)).toBeDefined();
  });

  test('a query string is kept on its second sight, not its first', () => {
    const cache = new ReadCache();
    const first = cache.add('$skip=1', plan({ $skip: '1' }));
    expect(first.plan.skip).toBe(1);
    expect(cache.get(order, '$skip=1')).toBeUndefined();
    expect(cache.size).toBe(0);
    const second = cache.add('$skip=1', plan({ $skip: '1' }));
    expect(cache.get(order, '$skip=1')).toBe(second);
    // Seen once for another table: not the same query string.
    const other = table('other', order.columns, order.primaryKey);
    cache.add('$skip=2', plan({ $skip: '2' }));
    cache.add('$skip=2', plan({ $skip: '2' }, other));
    expect(cache.get(other, '$skip=2')).toBeUndefined();
  });

  test('a stream of distinct query strings keeps (almost) none', () => {
    const cache = new ReadCache();
    for (let i = 0; i < 10_000; i++) cache.add(`$skip=${i}`, plan({ $skip: String(i) }));
    expect(cache.size).toBeLessThan(10); // hash collisions only
  });

  test('a small cache holds its own bound', () => {
    const cache = new ReadCache(3);
    for (let i = 0; i < 10; i++) keep(cache, `$skip=${i}`, plan({ $skip: String(i) }));
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
      const entry = keep(cache, query, plan({ $skip: String(i % 7) }, on));
      keep(cache, query, plan({ $skip: String(i % 7) }, on)); // and so does the same plan again
      expect(cache.get(on, query)?.plan.skip).toBe(entry.plan.skip);
      expect(cache.size).toBeLessThanOrEqual(4);
    }
    const found = [0, 1, 2, 3, 4, 5, 6].filter(
      (k) => cache.get(order, `$skip=${k}`) ?? cache.get(reread, `$skip=${k}`),
    );
    expect(found).toHaveLength(4); // the four kept last, none lost to a miscount
  });
});

describe('compiledRead', () => {
  test('the queries, serializer and path of the plan; kept with the entry for its own plan only', () => {
    const planned = plan({ $filter: "select eq 'a'", $count: 'true', $top: '5' });
    const cache = new ReadCache();
    const entry = cache.add('q', planned);
    const read = compiledRead(entry, planned, null);
    expect(read.select).toEqual(compileRead(planned));
    expect(read.count).toEqual(compileCount(planned));
    expect(compiledRead(entry, planned, null)).toBe(read);
    // A plan the policy stage rewrote is compiled afresh, never kept.
    const rewritten = { ...planned, top: 1 };
    const other = compiledRead(entry, rewritten, null);
    expect(other.select).toEqual(compileRead(rewritten));
    expect(compiledRead(entry, planned, null)).toBe(read);
  });

  test('no count query without $count', () => {
    expect(compileReadPlan(plan({ $top: '1' })).count).toBeNull();
  });

  test('a number out of range: the SELECT and the COUNT refuse with the same error, nothing kept', () => {
    const planned = plan({ $filter: 'id eq 1e400 or id eq 2e400', $count: 'true' });
    const entry = new ReadCache().add('q', planned);
    const countError = (() => {
      try {
        compileCount(planned);
      } catch (error) {
        return error;
      }
    })();
    expect(countError).toBeInstanceOf(Error);
    expect(() => compileRead(planned)).toThrow(countError as Error);
    expect(() => compiledRead(entry, planned, null)).toThrow(countError as Error);
    expect(entry.compiled).toBeNull();
  });
});

describe('compiledRead under a policy', () => {
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
    '%s: for every caller, what compiling the guarded plan afresh gives',
    (role) => {
      const entry = new ReadCache().add('q', plan(query, orders));
      for (const id of ['1', '2', '1']) {
        const guarded = guardRead(as(role, id), entry.plan);
        const read = compiledRead(entry, guarded, as(role, id));
        const fresh = compileReadPlan(guarded);
        expect(read.select).toEqual(fresh.select);
        expect(read.count).toEqual(fresh.count);
        expect(read.small).toBe(fresh.small);
        expect(read.serialize([1, 2, 3, 4])).toBe(fresh.serialize([1, 2, 3, 4]));
      }
    },
  );

  test('a grant without @user rewrites every caller’s plan alike: one compiled read per grant', () => {
    for (const role of ['open', 'narrow', 'both']) {
      const grant = userIndependentReadGrant(as(role, '1'), orders);
      expect(grant).not.toBeNull();
      const entry = new ReadCache().add('q', plan(query, orders));
      expect(guardRead(as(role, '1'), entry.plan)).toEqual(guardRead(as(role, '2'), entry.plan));
      const once = compiledRead(entry, guardRead(as(role, '1'), entry.plan), as(role, '1'));
      expect(compiledRead(entry, guardRead(as(role, '2'), entry.plan), as(role, '2'))).toBe(once);
    }
  });

  test('a grant with @user is compiled per request, never kept', () => {
    expect(userIndependentReadGrant(as('own', '1'), orders)).toBeNull();
    const entry = new ReadCache().add('q', plan(query, orders));
    const one = compiledRead(entry, guardRead(as('own', '1'), entry.plan), as('own', '1'));
    const two = compiledRead(entry, guardRead(as('own', '2'), entry.plan), as('own', '2'));
    expect(one.select.params).not.toEqual(two.select.params);
    expect(entry.byGrant).toBeNull();
    expect(entry.compiled).toBeNull();
  });
});
