/**
 * The exact SQL of reads across relations (docs/relations.md "How it runs"): to-one relations as
 * LEFT JOINs (a filtered one holding the joins its filter walks), to-many relations as one
 * correlated GROUP_CONCAT subquery per relation and level, paths in `$filter` and `$orderby` as
 * joins, lambdas as EXISTS; and the `$count` of such reads. The integration tests
 * (test/integration/relations.test.ts) run the same shapes on MariaDB.
 */
import { describe, expect, test } from '@jest/globals';
import type { ColumnInfo, TableInfo } from '../../../src/db/schema-types.js';
import { planRead } from '../../../src/plan/read-plan.js';
import { parseReadOptions, type QueryObject } from '../../../src/query/options.js';
import { compileCount, compileSelect, textOf } from '../../../src/sql/compile-read.js';
import type { CompiledQuery } from '../../../src/sql/compiled-query.js';
import { column } from '../fixtures/schema.js';
import { customers, employees, orders, shipments } from '../fixtures/shop.js';

/** Integer-typed LIMIT parameters (a GROUP_CONCAT LIMIT refuses others) shown as `int:<n>`. */
function shown({ sql, params }: CompiledQuery): CompiledQuery {
  return {
    sql,
    params: params.map((p) =>
      typeof p === 'object' && p !== null && 'value' in p ? `int:${String(p.value)}` : p,
    ),
  };
}

const read = (table: TableInfo, query: QueryObject) =>
  shown(compileSelect(planRead(parseReadOptions(query), table)));

/** The to-many text of one relation: `<n>:` then its rows (docs/relations.md). */
const many = (row: string, rest: string, order: string) =>
  `(SELECT CONCAT(COUNT(*), ':', COALESCE(GROUP_CONCAT(JSON_ARRAY(${row}) ORDER BY ${order} SEPARATOR ','), '')) ${rest})`;

describe('to-one relations: LEFT JOIN, a marker slot, then the related columns', () => {
  test.each<[string, TableInfo, QueryObject, CompiledQuery]>([
    [
      'the marker is the related key (NULL exactly when there is no related row)',
      orders,
      { $select: 'id', $expand: 'customer($select=name)' },
      {
        sql: 'SELECT `t0`.`id`, `t1`.`id`, `t1`.`name` FROM `orders` AS `t0` LEFT JOIN `customers` AS `t1` ON `t1`.`id` = `t0`.`customer_id`',
        params: [],
      },
    ],
    [
      'two keys to one table: two joins, each by its own column',
      customers,
      { $select: 'id', $expand: 'billing_address($select=city),shipping_address($select=city)' },
      {
        sql: 'SELECT `t0`.`id`, `t1`.`id`, `t1`.`city`, `t2`.`id`, `t2`.`city` FROM `customers` AS `t0` LEFT JOIN `addresses` AS `t1` ON `t1`.`id` = `t0`.`billing_address_id` LEFT JOIN `addresses` AS `t2` ON `t2`.`id` = `t0`.`shipping_address_id`',
        params: [],
      },
    ],
    [
      'a composite key: every pair in the ON, the first remote column the marker',
      shipments,
      { $select: 'id', $expand: 'order_items($select=qty)' },
      {
        sql: 'SELECT `t0`.`id`, `t1`.`order_id`, `t1`.`qty` FROM `shipments` AS `t0` LEFT JOIN `order_items` AS `t1` ON `t1`.`order_id` = `t0`.`order_id` AND `t1`.`line` = `t0`.`line`',
        params: [],
      },
    ],
    [
      'a $filter goes into the ON (the row is null when it fails, the parent stays)',
      orders,
      { $select: 'id', $expand: "customer($select=name;$filter=country eq 'Japan')" },
      {
        sql: 'SELECT `t0`.`id`, `t1`.`id`, `t1`.`name` FROM `orders` AS `t0` LEFT JOIN `customers` AS `t1` ON `t1`.`id` = `t0`.`customer_id` AND (`t1`.`country` = ?) IS TRUE',
        params: ['Japan'],
      },
    ],
    [
      // Once a bug: the path's join came after the ON that read it (ER_BAD_FIELD_ERROR). A
      // join's filter is `(…) IS TRUE`: compile-filter.ts joinClauses says why.
      "a $filter through a path joins that path inside the related row's join",
      orders,
      {
        $select: 'id',
        $expand:
          "customer($select=name;$filter=billing_address/city eq 'Paris';$expand=billing_address($select=city))",
      },
      {
        sql:
          'SELECT `t0`.`id`, `t1`.`id`, `t1`.`name`, `t3`.`id`, `t3`.`city` FROM `orders` AS `t0` ' +
          'LEFT JOIN (`customers` AS `t1` LEFT JOIN `addresses` AS `t2` ON `t2`.`id` = `t1`.`billing_address_id`) ON `t1`.`id` = `t0`.`customer_id` AND (`t2`.`city` = ?) IS TRUE ' +
          'LEFT JOIN `addresses` AS `t3` ON `t3`.`id` = `t1`.`billing_address_id`',
        params: ['Paris'],
      },
    ],
    [
      'nested joins keep their parameters in text order',
      orders,
      {
        $select: 'id',
        $expand:
          "customer($select=name;$filter=billing_address/city eq 'Paris' and shipping_address/\"zip code\" eq '1' and name eq 'x')",
      },
      {
        sql:
          'SELECT `t0`.`id`, `t1`.`id`, `t1`.`name` FROM `orders` AS `t0` ' +
          'LEFT JOIN (`customers` AS `t1` LEFT JOIN `addresses` AS `t2` ON `t2`.`id` = `t1`.`billing_address_id` LEFT JOIN `addresses` AS `t3` ON `t3`.`id` = `t1`.`shipping_address_id`) ' +
          'ON `t1`.`id` = `t0`.`customer_id` AND (`t2`.`city` = ? AND `t3`.`zip code` = ? AND `t1`.`name` = ?) IS TRUE',
        params: ['Paris', '1', 'x'],
      },
    ],
    [
      'a self-reference',
      employees,
      { $select: 'id', $expand: 'manager($select=name;$expand=manager($select=name))' },
      {
        sql: 'SELECT `t0`.`id`, `t1`.`id`, `t1`.`name`, `t2`.`id`, `t2`.`name` FROM `employees` AS `t0` LEFT JOIN `employees` AS `t1` ON `t1`.`id` = `t0`.`manager_id` LEFT JOIN `employees` AS `t2` ON `t2`.`id` = `t1`.`manager_id`',
        params: [],
      },
    ],
  ])('%s', (_, table, query, expected) => {
    expect(read(table, query)).toEqual(expected);
  });
});

describe('to-many relations: one correlated subquery per relation, `<n>:` rows', () => {
  test.each<[string, TableInfo, QueryObject, CompiledQuery]>([
    [
      'ordered by the primary key; values as text; none is `0:`, never NULL',
      orders,
      { $select: 'id', $expand: 'order_items($select=qty,product)' },
      {
        sql:
          'SELECT `t0`.`id`, ' +
          many(
            '`t1`.`qty`, `t1`.`product`',
            'FROM `order_items` AS `t1` WHERE `t1`.`order_id` = `t0`.`id`',
            '`t1`.`order_id` ASC, `t1`.`line` ASC',
          ) +
          ' AS `t1` FROM `orders` AS `t0`',
        params: [],
      },
    ],
    [
      'paged per parent: the count says how many rows the page has, LIMIT inside GROUP_CONCAT',
      orders,
      { $select: 'id', $expand: 'order_items($select=qty;$orderby=qty desc;$top=2;$skip=1)' },
      {
        sql: "SELECT `t0`.`id`, (SELECT CONCAT(LEAST(GREATEST(COUNT(*) - ?, 0), ?), ':', COALESCE(GROUP_CONCAT(JSON_ARRAY(`t1`.`qty`) ORDER BY `t1`.`qty` DESC SEPARATOR ',' LIMIT ?, ?), '')) FROM `order_items` AS `t1` WHERE `t1`.`order_id` = `t0`.`id`) AS `t1` FROM `orders` AS `t0`",
        params: ['1', '2', 'int:1', 'int:2'],
      },
    ],
    [
      // Once a bug: the LIMIT's parameters came after the filter's (a 500 from MariaDB).
      'paged and filtered, with a filtered to-one inside: parameters in text order',
      orders,
      {
        $select: 'id',
        $expand:
          "order_items($select=qty;$filter=qty gt 1;$top=2;$skip=1;$expand=products($select=name;$filter=name ne 'x'))",
      },
      {
        sql:
          "SELECT `t0`.`id`, (SELECT CONCAT(LEAST(GREATEST(COUNT(*) - ?, 0), ?), ':', COALESCE(GROUP_CONCAT(JSON_ARRAY(`t1`.`qty`, `t2`.`sku`, `t2`.`name`) ORDER BY `t1`.`order_id` ASC, `t1`.`line` ASC SEPARATOR ',' LIMIT ?, ?), '')) " +
          'FROM `order_items` AS `t1` LEFT JOIN `products` AS `t2` ON `t2`.`sku` = `t1`.`product` AND (`t2`.`name` <> ?) IS TRUE ' +
          'WHERE `t1`.`order_id` = `t0`.`id` AND `t1`.`qty` > ?) AS `t1` FROM `orders` AS `t0`',
        params: ['1', '2', 'int:1', 'int:2', 'x', 1],
      },
    ],
    [
      'an expanded to-one inside: joined in the subquery, its marker and columns in the row',
      orders,
      {
        $select: 'id',
        $expand: 'order_items($select=qty;$filter=qty gt 1;$expand=products($select=name))',
      },
      {
        sql:
          'SELECT `t0`.`id`, ' +
          many(
            '`t1`.`qty`, `t2`.`sku`, `t2`.`name`',
            'FROM `order_items` AS `t1` LEFT JOIN `products` AS `t2` ON `t2`.`sku` = `t1`.`product` WHERE `t1`.`order_id` = `t0`.`id` AND `t1`.`qty` > ?',
            '`t1`.`order_id` ASC, `t1`.`line` ASC',
          ) +
          ' AS `t1` FROM `orders` AS `t0`',
        params: [1],
      },
    ],
    [
      'three levels: a to-many inside a to-many is a subquery inside the subquery',
      customers,
      {
        $select: 'id',
        $expand:
          'orders($select=id;$expand=order_items($select=line;$expand=shipments($select=id)))',
      },
      {
        sql:
          'SELECT `t0`.`id`, ' +
          many(
            '`t1`.`id`, ' +
              many(
                '`t2`.`line`, ' +
                  many(
                    '`t3`.`id`',
                    'FROM `shipments` AS `t3` WHERE `t3`.`order_id` = `t2`.`order_id` AND `t3`.`line` = `t2`.`line`',
                    '`t3`.`id` ASC',
                  ),
                'FROM `order_items` AS `t2` WHERE `t2`.`order_id` = `t1`.`id`',
                '`t2`.`order_id` ASC, `t2`.`line` ASC',
              ),
            'FROM `orders` AS `t1` WHERE `t1`.`customer_id` = `t0`.`id`',
            '`t1`.`id` ASC',
          ) +
          ' AS `t1` FROM `customers` AS `t0`',
        params: [],
      },
    ],
  ])('%s', (_, table, query, expected) => {
    expect(read(table, query)).toEqual(expected);
  });
});

describe('paths and lambdas in $filter and $orderby', () => {
  test.each<[string, QueryObject, CompiledQuery]>([
    [
      'a path in $filter and $orderby shares one join',
      { $select: 'id', $filter: "customer/country eq 'Japan'", $orderby: 'customer/name desc' },
      {
        sql: 'SELECT `t0`.`id` FROM `orders` AS `t0` LEFT JOIN `customers` AS `t1` ON `t1`.`id` = `t0`.`customer_id` WHERE `t1`.`country` = ? ORDER BY `t1`.`name` DESC',
        params: ['Japan'],
      },
    ],
    [
      'any with a condition, all (NULL counts as not true), any()',
      {
        $select: 'id',
        $filter:
          'order_items/any(i: i/qty gt 5) and order_items/all(i: i/products/name ne null) and order_items/any()',
      },
      {
        sql:
          'SELECT `t0`.`id` FROM `orders` AS `t0` WHERE (' +
          'EXISTS (SELECT 1 FROM `order_items` AS `t1` WHERE `t1`.`order_id` = `t0`.`id` AND `t1`.`qty` > ?) AND ' +
          'NOT EXISTS (SELECT 1 FROM `order_items` AS `t2` LEFT JOIN `products` AS `t3` ON `t3`.`sku` = `t2`.`product` WHERE `t2`.`order_id` = `t0`.`id` AND (`t3`.`name` IS NOT NULL) IS NOT TRUE) AND ' +
          'EXISTS (SELECT 1 FROM `order_items` AS `t4` WHERE `t4`.`order_id` = `t0`.`id`))',
        params: [5],
      },
    ],
  ])('%s', (_, query, expected) => {
    expect(read(orders, query)).toEqual(expected);
  });

  test('$count counts the top rows: the paths the filter walks, no subquery of an expansion', () => {
    const plan = planRead(
      parseReadOptions({
        $filter: "customer/country eq 'Japan'",
        $expand: 'order_items',
        $count: 'true',
      }),
      orders,
    );
    expect(shown(compileCount(plan))).toEqual({
      sql: 'SELECT COUNT(*) FROM `orders` AS `t0` LEFT JOIN `customers` AS `t1` ON `t1`.`id` = `t0`.`customer_id` WHERE `t1`.`country` = ?',
      params: ['Japan'],
    });
  });
});

describe('a page of a read with expanded to-one relations: the page first, then its joins', () => {
  test('with $skip: a derived table of the columns the rest reads, joined and ordered again', () => {
    expect(
      read(orders, {
        $select: 'note',
        $filter: "note ne 'x' and order_items/any()",
        $orderby: 'id desc',
        $top: '2',
        $skip: '4',
        $expand: 'customer($select=name;$filter=id ne 3),order_items($select=qty)',
      }),
    ).toEqual({
      sql:
        'SELECT `t0`.`note`, `t2`.`id`, `t2`.`name`, ' +
        many(
          '`t3`.`qty`',
          'FROM `order_items` AS `t3` WHERE `t3`.`order_id` = `t0`.`id`',
          '`t3`.`order_id` ASC, `t3`.`line` ASC',
        ) +
        // The page's sort key, not selected, added for its Link (sql/compile-read.ts addedKeys).
        ' AS `t3`, `t0`.`id` FROM (SELECT `t0`.`id`, `t0`.`customer_id`, `t0`.`note` FROM `orders` AS `t0` ' +
        'WHERE (`t0`.`note` <> ? AND EXISTS (SELECT 1 FROM `order_items` AS `t1` WHERE `t1`.`order_id` = `t0`.`id`)) ' +
        'ORDER BY `t0`.`id` DESC LIMIT ? OFFSET ?) AS `t0` ' +
        'LEFT JOIN `customers` AS `t2` ON `t2`.`id` = `t0`.`customer_id` AND (`t2`.`id` <> ?) IS TRUE ' +
        'ORDER BY `t0`.`id` DESC',
      params: ['x', '2', '4', 3],
    });
  });

  test.each<[string, QueryObject]>([
    ['no $skip: the join stops at the page', { $top: '2', $expand: 'customer' }],
    ['$skip=0', { $top: '2', $skip: '0', $expand: 'customer' }],
    ['no join (to-many only)', { $skip: '2', $expand: 'order_items' }],
    ['the order reads the join', { $skip: '2', $orderby: 'customer/name', $expand: 'customer' }],
    [
      'the filter reads the join',
      { $skip: '2', $filter: "customer/name eq 'x'", $expand: 'customer' },
    ],
    [
      'a lambda ranges from the join',
      { $skip: '2', $filter: 'customer/orders/any()', $expand: 'customer' },
    ],
    [
      'a lambda reads the join',
      { $skip: '2', $filter: "order_items/any(i: customer/name eq 'x')", $expand: 'customer' },
    ],
  ])('one SELECT when %s', (_, query) => {
    expect(read(orders, query).sql).not.toContain('FROM (SELECT');
  });
});

describe('values inside a to-many relation’s JSON arrays (textOf)', () => {
  const col = (dataType: string, kind: ColumnInfo['kind']) =>
    column('c', { dataType, columnType: dataType, kind });
  test.each<[string, ColumnInfo, string, string]>([
    ['INT: an exact JSON number', col('int', 'integer'), 'c', 'c'],
    [
      'BIGINT: text (JSON.parse rounds past 2^53)',
      col('bigint', 'integer'),
      'CAST(c AS CHAR)',
      'CAST(c AS CHAR)',
    ],
    ['DECIMAL: text (its digits)', col('decimal', 'decimal'), 'CAST(c AS CHAR)', 'CAST(c AS CHAR)'],
    ['YEAR', col('year', 'year'), 'c', 'c'],
    [
      'DATETIME: MariaDB writes its text; MySQL six digits',
      col('datetime', 'datetime'),
      'c',
      'CAST(c AS CHAR)',
    ],
    ['DATE', col('date', 'date'), 'c', 'CAST(c AS CHAR)'],
    ['TIME', col('time', 'string'), 'c', 'CAST(c AS CHAR)'],
    ['VARCHAR', col('varchar', 'string'), 'c', 'c'],
    ['BLOB: base64', col('blob', 'binary'), 'TO_BASE64(c)', 'TO_BASE64(c)'],
    ['BIT', col('bit', 'bit'), 'CAST(c + 0 AS CHAR)', 'CAST(c + 0 AS CHAR)'],
    [
      'FLOAT: the double it widens to',
      col('float', 'float'),
      'CAST(c + 0e0 AS CHAR)',
      'CAST(c + 0e0 AS CHAR)',
    ],
    ['DOUBLE', col('double', 'float'), 'CAST(c AS CHAR)', 'CAST(c AS CHAR)'],
    ['JSON: its text', col('longtext', 'json'), 'CAST(c AS CHAR)', 'CAST(c AS CHAR)'],
  ])('%s', (_, info, mariadb, mysql) => {
    const on = (flavour: 'mariadb' | 'mysql') => textOf('c', info, { qualify: true, flavour });
    expect([on('mariadb'), on('mysql')]).toEqual([mariadb, mysql]);
  });
});
