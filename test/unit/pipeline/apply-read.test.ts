import { describe, expect, test } from '@jest/globals';
import { compileApplyPlan } from '../../../src/pipeline/apply-read.js';
import { compileRead } from '../../../src/pipeline/read.js';
import { ShapeCache } from '../../../src/pipeline/read-shape.js';
import { planApply } from '../../../src/plan/apply.js';
import { parseReadOptions, type QueryObject } from '../../../src/query/options.js';
import { sale } from '../fixtures/apply-schema.js';

const compiled = (query: QueryObject) => compileApplyPlan(planApply(parseReadOptions(query), sale));

describe('the answer objects, from values as mysql2 returns them', () => {
  test('each aggregate written as what MySQL gives: exact DECIMAL digits, big sums as strings', () => {
    const { serialize } = compiled({
      $apply:
        'aggregate(qty with sum as a,big with sum as b,qty with average as c,price with sum as d,price with average as e,ratio with sum as f,weight with max as g,$count as h,name with countdistinct as i,bits with max as j)',
    });
    expect(
      serialize([
        '3',
        '18014398509481986',
        '1.5000',
        '33.35',
        '16.675000',
        4.5,
        1.100000023841858,
        '7',
        '2',
        Buffer.from([0x05]),
      ]),
    ).toBe(
      '{"a":3,"b":"18014398509481986","c":1.5000,"d":33.35,"e":16.675000,"f":4.5,"g":1.1,"h":7,"i":2,"j":5}',
    );
    // Over no rows MySQL answers NULL for the sums and 0 for the counts.
    expect(serialize([null, null, null, null, null, null, null, '0', '0', null])).toBe(
      '{"a":null,"b":null,"c":null,"d":null,"e":null,"f":null,"g":null,"h":0,"i":0,"j":null}',
    );
  });

  test('dates and times as strings, computed values by what their function gives', () => {
    const { serialize } = compiled({
      $apply:
        'compute(year(at) as y,tolower(name) as n,date(at) as d)/groupby((y,n,d),aggregate(day with min as first,at with max as last,clock with max as latest))',
    });
    expect(
      serialize([2024, 'ann', '2024-01-03', '2023-12-31', '2024-01-03 10:00:00', '17:45:10']),
    ).toBe(
      '{"y":2024,"n":"ann","d":"2024-01-03","first":"2023-12-31","last":"2024-01-03 10:00:00","latest":"17:45:10"}',
    );
  });

  test('paths as nested objects, always there (a missing relation is a NULL group value)', () => {
    const { serialize } = compiled({
      $apply:
        'groupby((customer/name,qty,customer/country/region),aggregate(price with sum as total))',
    });
    expect(serialize(['Ann', null, 2, '3.50'])).toBe(
      '{"customer":{"name":"Ann","country":{"region":null}},"qty":2,"total":3.50}',
    );
    expect(serialize([null, null, null, null])).toBe(
      '{"customer":{"name":null,"country":{"region":null}},"qty":null,"total":null}',
    );
  });

  test('one serializer per shape of answer, so the read caches can compare compiled reads', () => {
    const query = { $apply: 'groupby((name),aggregate(price with sum as total))' };
    expect(compiled(query).serialize).toBe(compiled({ ...query, $filter: 'qty gt 1' }).serialize);
    expect(compiled(query).serialize).not.toBe(
      compiled({ $apply: 'groupby((name),aggregate(price with sum as sum))' }).serialize,
    );
  });

  test('fetched whole when bounded: one object, or a small page of narrow groups', () => {
    expect(compiled({ $apply: 'aggregate($count as n)' }).small).toBe(true);
    expect(compiled({ $apply: 'groupby((qty))' }).small).toBe(false);
    expect(compiled({ $apply: 'groupby((qty))', $top: '10' }).small).toBe(true);
    expect(compiled({ $apply: 'groupby((doc))', $top: '10' }).small).toBe(false);
  });

  test('the read pipeline takes $apply as a read option; $count compiles the groups count', () => {
    const read = compileRead(sale, { $apply: 'groupby((name))', $count: 'true' }, null);
    expect(read.select.sql).toBe('SELECT `name` FROM `sale` GROUP BY `name` ORDER BY `name` ASC');
    expect(read.count?.sql).toBe(
      'SELECT COUNT(*) FROM (SELECT 1 FROM `sale` GROUP BY `name`) AS `g`',
    );
    expect(read.namesUser).toBe(false);
  });

  test("the shape cache serves $apply reads: a template of the $filter's integers, exact", () => {
    const shapes = new ShapeCache();
    const apply = 'groupby((customer/name),aggregate(price with sum as total))';
    const query = (n: number) => ({ $filter: `qty gt ${n}`, $apply: apply, $count: 'true' });
    const serve = (n: number) => {
      const shape = shapes.find(sale, '', query(n));
      if (shape === null) throw new Error('no shape');
      const hit = shapes.read(shape);
      if (hit) return { read: hit, hit: true };
      const read = compileRead(sale, query(n), null);
      shapes.learn(shape, query(n), read, (q) => compileRead(sale, q, null));
      return { read, hit: false };
    };
    expect([serve(1).hit, serve(2).hit, serve(3).hit]).toEqual([false, false, true]);
    const served = serve(42);
    const made = compileRead(sale, query(42), null);
    expect(served.hit).toBe(true);
    expect([served.read.select, served.read.count, served.read.serialize]).toEqual([
      made.select,
      made.count,
      made.serialize,
    ]);
    expect(served.read.select.params).toEqual([42]);
  });
});
