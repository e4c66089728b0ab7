import { describe, expect, test } from '@jest/globals';
import type { TableInfo } from '../../../src/db/schema-types.js';
import { planApply } from '../../../src/plan/apply.js';
import { Scope } from '../../../src/plan/scope.js';
import { fullView, type TableView, type Viewer } from '../../../src/plan/view.js';
import { parseFilter } from '../../../src/query/filter-parser.js';
import { parseReadOptions, type QueryObject } from '../../../src/query/options.js';
import { compileApply, compileApplyCount } from '../../../src/sql/compile-apply.js';
import type { CompiledQuery } from '../../../src/sql/compiled-query.js';
import { sale } from '../fixtures/apply-schema.js';
import { order } from '../fixtures/schema.js';

const planOf = (query: QueryObject, table: TableInfo = sale, viewer?: Viewer) =>
  planApply(parseReadOptions(query), table, viewer);
const compile = (query: QueryObject, table: TableInfo = sale, viewer?: Viewer): CompiledQuery =>
  compileApply(planOf(query, table, viewer));
const count = (query: QueryObject, table: TableInfo = sale): CompiledQuery =>
  compileApplyCount(planOf({ ...query, $count: 'true' }, table));

describe('compileApply: exact SQL', () => {
  test.each<[string, QueryObject, CompiledQuery]>([
    [
      'one table: names bare, GROUP BY and ORDER BY repeat the expressions',
      { $apply: 'groupby((name),aggregate(price with sum as total,$count as n))' },
      {
        sql: 'SELECT `name`, SUM(`price`), COUNT(*) FROM `sale` GROUP BY `name` ORDER BY `name` ASC',
        params: [],
      },
    ],
    [
      'every method, fixed SQL each',
      {
        $apply:
          'aggregate(price with sum as a,price with average as b,at with min as c,at with max as d,customer_id with countdistinct as e,$count as f)',
      },
      {
        sql: 'SELECT SUM(`price`), AVG(`price`), MIN(`at`), MAX(`at`), COUNT(DISTINCT `customer_id`), COUNT(*) FROM `sale`',
        params: [],
      },
    ],
    [
      'a path: qualified names, LEFT JOINs made once per relation, values in groupby order',
      {
        $apply:
          'groupby((customer/country/region,customer/name,name),aggregate(qty with sum as units))',
      },
      {
        sql:
          'SELECT `t2`.`region`, `t1`.`name`, `t0`.`name`, SUM(`t0`.`qty`) FROM `sale` AS `t0`' +
          ' LEFT JOIN `customer` AS `t1` ON `t1`.`id` = `t0`.`customer_id`' +
          ' LEFT JOIN `country` AS `t2` ON `t2`.`code` = `t1`.`country_code`' +
          ' GROUP BY `t2`.`region`, `t1`.`name`, `t0`.`name`' +
          ' ORDER BY `t2`.`region` ASC, `t1`.`name` ASC, `t0`.`name` ASC',
        params: [],
      },
    ],
    [
      'an aggregate through a path',
      { $apply: 'aggregate(customer/id with countdistinct as buyers)' },
      {
        sql:
          'SELECT COUNT(DISTINCT `t1`.`id`) FROM `sale` AS `t0`' +
          ' LEFT JOIN `customer` AS `t1` ON `t1`.`id` = `t0`.`customer_id`',
        params: [],
      },
    ],
    [
      'compute() then group: the function repeated wherever the name stands',
      {
        $apply:
          'compute(year(at) as y,tolower(name) as n)/groupby((y,n),aggregate(price with max as top))',
        $orderby: 'n desc',
      },
      {
        sql:
          'SELECT YEAR(`at`), LOWER(`name`), MAX(`price`) FROM `sale`' +
          ' GROUP BY YEAR(`at`), LOWER(`name`) ORDER BY LOWER(`name`) DESC, YEAR(`at`) ASC',
        params: [],
      },
    ],
    [
      'an aggregate of a computed value',
      { $apply: 'compute(length(name) as len)/aggregate(len with average as avg)' },
      { sql: 'SELECT AVG(CHAR_LENGTH(`name`)) FROM `sale`', params: [] },
    ],
    [
      '$filter, then filter() steps (a computed name stands for its function), ANDed; values bound',
      {
        $filter: 'qty gt 2',
        $apply:
          "compute(year(day) as y)/filter(y ge 2024)/filter(name eq 'x' or price lt 1.5)/groupby((y))",
      },
      {
        sql:
          'SELECT YEAR(`day`) FROM `sale`' +
          ' WHERE (`qty` > ? AND YEAR(`day`) >= ? AND (`name` = ? OR `price` < CAST(? AS DECIMAL(65,30))))' +
          ' GROUP BY YEAR(`day`) ORDER BY YEAR(`day`) ASC',
        params: [2, 2024, 'x', '1.5'],
      },
    ],
    [
      'a filter() through a relation joins it; a lambda makes columns qualified',
      {
        $apply:
          "filter(customer/name eq 'Ann' and customer/sale/any(s: s/qty gt 1))/aggregate($count as n)",
      },
      {
        sql:
          'SELECT COUNT(*) FROM `sale` AS `t0` LEFT JOIN `customer` AS `t1` ON `t1`.`id` = `t0`.`customer_id`' +
          ' WHERE (`t1`.`name` = ? AND EXISTS (SELECT 1 FROM `sale` AS `t2` WHERE `t2`.`customer_id` = `t1`.`id` AND `t2`.`qty` > ?))',
        params: ['Ann', 1],
      },
    ],
    [
      '$orderby an alias, then the groups; $top and $skip page the groups',
      {
        $apply: 'groupby((name),aggregate(price with sum as total))',
        $orderby: 'total desc',
        $top: '5',
        $skip: '10',
      },
      {
        sql:
          'SELECT `name`, SUM(`price`) FROM `sale` GROUP BY `name`' +
          ' ORDER BY SUM(`price`) DESC, `name` ASC LIMIT ? OFFSET ?',
        params: ['5', '10'],
      },
    ],
    [
      'an alias named like a column orders by the aggregate',
      { $apply: 'groupby((name),aggregate(price with sum as price))', $orderby: 'price' },
      {
        sql: 'SELECT `name`, SUM(`price`) FROM `sale` GROUP BY `name` ORDER BY SUM(`price`) ASC, `name` ASC',
        params: [],
      },
    ],
    [
      '$skip alone',
      { $apply: 'groupby((name))', $skip: '3' },
      {
        sql: 'SELECT `name` FROM `sale` GROUP BY `name` ORDER BY `name` ASC LIMIT 18446744073709551615 OFFSET ?',
        params: ['3'],
      },
    ],
    [
      'filter() and compute() alone: the rows, every column then the computed values',
      { $apply: 'filter(qty gt 1)/compute(month(day) as m)', $orderby: 'm,id desc', $top: '2' },
      {
        sql:
          'SELECT `id`, `customer_id`, `price`, `qty`, `big`, `ratio`, `weight`, `day`, `at`, `clock`, `yr`, `bits`, `data`, `doc`, `name`, MONTH(`day`)' +
          ' FROM `sale` WHERE `qty` > ? ORDER BY MONTH(`day`) ASC, `id` DESC LIMIT ?',
        params: [1, '2'],
      },
    ],
    [
      'names with a backtick, a reserved word and non-ASCII are quoted',
      { $apply: 'groupby(("we`ird",select,größe),aggregate(price with sum as "a`b"))' },
      {
        sql:
          'SELECT `we``ird`, `select`, `größe`, SUM(`price`) FROM `order`' +
          ' GROUP BY `we``ird`, `select`, `größe` ORDER BY `we``ird` ASC, `select` ASC, `größe` ASC',
        params: [],
      },
    ],
  ])('%s', (_, query, expected) => {
    const table = query.$apply?.includes('größe') ? order : sale;
    expect(compile(query, table)).toEqual(expected);
  });

  test('MySQL: the same text (a flavour of its own only for expanded relations)', () => {
    const plan = planOf({ $apply: 'groupby((customer/name),aggregate($count as n))' });
    expect(compileApply(plan, 'mysql')).toEqual(compileApply(plan, 'mariadb'));
  });

  test("the caller's row condition is ANDed, at the table and at each relation walked", () => {
    const where = (table: TableInfo, text: string): TableView => ({
      ...fullView(table),
      rows: (source) => Scope.filterOn(parseFilter(text), source, fullView(table)),
    });
    const viewer: Viewer = (table) =>
      table.name === 'sale'
        ? where(table, 'qty ge 0')
        : table.name === 'customer'
          ? where(table, "name ne 'hidden'")
          : fullView(table);
    expect(
      compile(
        { $filter: 'price gt 1', $apply: 'groupby((customer/name),aggregate($count as n))' },
        sale,
        viewer,
      ),
    ).toEqual({
      sql:
        'SELECT `t1`.`name`, COUNT(*) FROM `sale` AS `t0`' +
        ' LEFT JOIN `customer` AS `t1` ON `t1`.`id` = `t0`.`customer_id` AND (`t1`.`name` <> ?) IS TRUE' +
        ' WHERE (`t0`.`price` > ? AND `t0`.`qty` >= ?) GROUP BY `t1`.`name` ORDER BY `t1`.`name` ASC',
      params: ['hidden', 1, 0],
    });
  });
});

describe('compileApplyCount', () => {
  test.each<[string, QueryObject, CompiledQuery]>([
    [
      'the groups, counted over the grouped rows (paging and order left out)',
      {
        $filter: 'qty gt 1',
        $apply: 'groupby((customer/name),aggregate($count as n))',
        $orderby: 'n',
        $top: '1',
      },
      {
        sql:
          'SELECT COUNT(*) FROM (SELECT 1 FROM `sale` AS `t0`' +
          ' LEFT JOIN `customer` AS `t1` ON `t1`.`id` = `t0`.`customer_id`' +
          ' WHERE `t0`.`qty` > ? GROUP BY `t1`.`name`) AS `g`',
        params: [1],
      },
    ],
    [
      'aggregate() alone: one group whatever the rows, no scan',
      { $apply: 'filter(qty gt 1)/aggregate($count as n)' },
      { sql: 'SELECT 1', params: [] },
    ],
    [
      'the rows themselves',
      { $apply: 'filter(qty gt 1)/compute(year(day) as y)' },
      { sql: 'SELECT COUNT(*) FROM `sale` WHERE `qty` > ?', params: [1] },
    ],
  ])('%s', (_, query, expected) => {
    expect(count(query)).toEqual(expected);
  });
});
