/**
 * The read cost estimate (plan/read-cost.ts) of plans over a shop whose tables carry row
 * counts as the schema read gives them: 500 customers, 2,500 orders, 10,000 order items, 20
 * products. Fan-outs: 5 orders a customer, 4 items an order, 500 items a product.
 */
import { type ForeignKey, nameRelations } from '../../../src/db/relations.js';
import type { Relation, TableInfo } from '../../../src/db/schema-types.js';
import { planApply } from '../../../src/plan/apply.js';
import {
  answerRows,
  applyCost,
  EXPANDED_ROW_WEIGHT,
  readCost,
} from '../../../src/plan/read-cost.js';
import { planRead } from '../../../src/plan/read-plan.js';
import { parseReadOptions } from '../../../src/query/options.js';
import { column, table, text } from '../fixtures/schema.js';

const withRows = (t: TableInfo, rows: number | undefined): TableInfo =>
  rows === undefined ? t : { ...t, rows };

function shop(counts: Partial<Record<string, number>>): Map<string, TableInfo> {
  const tables = [
    withRows(table('customers', [column('id'), text('name')], ['id']), counts.customers),
    withRows(
      table('orders', [column('id'), column('customer_id'), text('status')], ['id']),
      counts.orders,
    ),
    withRows(
      table(
        'order_items',
        [column('order_id'), column('product_id'), column('quantity')],
        ['order_id', 'product_id'],
      ),
      counts.order_items,
    ),
    withRows(table('products', [column('id'), text('name')], ['id']), counts.products),
  ];
  const byName = new Map(tables.map((t) => [t.name, t]));
  const fk = (name: string, from: string, columns: string[], to: string): ForeignKey => ({
    name,
    table: from,
    columns,
    referencedTable: to,
    referencedColumns: ['id'],
  });
  nameRelations(
    byName,
    new Map(tables.map((t) => [t.name, t.relations as Map<string, Relation>])),
    [
      fk('fk_orders_customer', 'orders', ['customer_id'], 'customers'),
      fk('fk_items_order', 'order_items', ['order_id'], 'orders'),
      fk('fk_items_product', 'order_items', ['product_id'], 'products'),
    ],
  );
  return byName;
}

const SHOP = shop({ customers: 500, orders: 2500, order_items: 10_000, products: 20 });

const cost = (name: string, query: Record<string, string>, tables = SHOP) =>
  readCost(planRead(parseReadOptions(query), tables.get(name) as TableInfo));

describe('readCost', () => {
  test('a plain read costs nothing however large the table: it streams', () => {
    expect(cost('order_items', { $top: '1' })).toBe(0);
    expect(cost('order_items', {})).toBe(0);
    expect(cost('order_items', { $filter: 'quantity gt 3', $orderby: 'quantity' })).toBe(0);
    expect(cost('customers', { $top: '50', $count: 'true' })).toBe(0);
  });

  test('a to-one expansion or path streams with its row: nothing', () => {
    expect(cost('order_items', { $expand: 'product,order' })).toBe(0);
    expect(cost('order_items', { $filter: "product/name eq 'tea'" })).toBe(0);
  });

  test('a lambda visits the fan-out of every row of the table', () => {
    // 500 customers × 5 orders.
    expect(cost('customers', { $filter: "orders/any(o: o/status eq 'paid')" })).toBe(2500);
    // $top does not bound it: every row may be tested before 50 match.
    expect(cost('customers', { $filter: 'orders/any()', $top: '50' })).toBe(2500);
    // 500 × 5 × (1 + 4).
    expect(
      cost('customers', { $filter: 'orders/any(o: o/order_items/any(i: i/quantity gt 3))' }),
    ).toBe(12_500);
  });

  test('a filter on the primary key tests one row', () => {
    expect(cost('customers', { $filter: "id eq 7 and orders/any(o: o/status eq 'new')" })).toBe(5);
  });

  test('nested lambdas multiply their fan-outs, to-one steps adding a lookup', () => {
    // 500 × 5 × (1 + 4 × (1 + 1 join + 500)).
    expect(
      cost('customers', {
        $filter:
          'orders/any(o: o/order_items/any(i: i/product/order_items/any(k: k/quantity eq 99)))',
      }),
    ).toBe(5_022_500);
  });

  test('an expansion costs its rows in one row of the answer, each at EXPANDED_ROW_WEIGHT', () => {
    expect(EXPANDED_ROW_WEIGHT).toBe(8);
    // An order's 4 items × (8 + 1 product join), however many orders stream: the client's
    // reading paces them.
    expect(cost('orders', { $expand: 'order_items($expand=product)' })).toBe(36);
    expect(cost('orders', { $expand: 'order_items($expand=product)', $top: '50' })).toBe(36);
    expect(cost('orders', { $expand: 'customer,order_items', $orderby: 'id' })).toBe(32);
    // A product's 500 items, or the first 3 of them ($top per parent row).
    expect(cost('products', { $expand: 'order_items' })).toBe(500 * 8);
    expect(cost('products', { $expand: 'order_items($top=3)' })).toBe(3 * 8);
    expect(cost('products', { $expand: 'order_items($skip=2;$top=3)' })).toBe(5 * 8);
    // Its filter's join is walked for all 500 of a product's items, its lambdas with it.
    expect(
      cost('products', { $expand: 'order_items($filter=order/customer_id eq 1;$top=3)' }),
    ).toBe(500 + 3 * 8);
    expect(
      cost('products', {
        $expand: "order_items($filter=order/customer/orders/any(o: o/status eq 'new');$top=3)",
      }),
    ).toBe(500 * (2 + 5) + 3 * 8);
    // Through a to-one expansion: an item's order's 4 items.
    expect(cost('order_items', { $expand: 'order($expand=order_items)' })).toBe(4 * 8);
  });

  test('lambdas over every row and one answer row’s expansions add up', () => {
    expect(
      cost('customers', { $filter: "orders/any(o: o/status eq 'paid')", $expand: 'orders' }),
    ).toBe(2500 + 5 * 8);
  });

  test('nested to-many expansions multiply: an item, its product, all its items', () => {
    // 500 × (8 + 1 + 500 × 8).
    expect(
      cost('products', {
        $expand: 'order_items($expand=product($expand=order_items))',
        $top: '1',
      }),
    ).toBe(2_004_500);
    expect(cost('products', { $expand: 'order_items($expand=product($expand=order_items))' })).toBe(
      2_004_500,
    );
    expect(
      cost('products', {
        $expand: 'order_items($expand=product($expand=order_items($top=2)))',
        $top: '1',
      }),
    ).toBe(500 * (8 + 1 + 2 * 8));
  });

  test('tables without statistics (a view, a table never counted) cost nothing', () => {
    const unknown = shop({});
    expect(
      cost(
        'products',
        { $expand: 'order_items($expand=product($expand=order_items))', $top: '1' },
        unknown,
      ),
    ).toBe(0);
  });
});

describe('applyCost', () => {
  const apply = (name: string, query: Record<string, string>) =>
    applyCost(planApply(parseReadOptions(query), SHOP.get(name) as TableInfo));

  test('totals cost their filters’ lambdas over every row', () => {
    expect(apply('orders', { $apply: 'groupby((status),aggregate($count as n))' })).toBe(0);
    expect(
      apply('customers', {
        $apply: "filter(orders/any(o: o/status eq 'new'))/aggregate($count as n)",
      }),
    ).toBe(2500);
  });
});

describe('answerRows', () => {
  const rows = (name: string, query: Record<string, string>, tables = SHOP, oneRow = false) =>
    answerRows(planRead(parseReadOptions(query), tables.get(name) as TableInfo), oneRow);

  test("the table's rows, at most $skip + $top, one for the key", () => {
    expect(rows('order_items', {})).toBe(10_000);
    expect(rows('order_items', { $top: '50' })).toBe(50);
    expect(rows('order_items', { $top: '50', $skip: '100' })).toBe(150);
    expect(rows('order_items', { $top: '50000' })).toBe(10_000);
    expect(rows('customers', { $filter: 'id eq 7' })).toBe(1);
    expect(rows('customers', {}, SHOP, true)).toBe(1);
    // A filter on another column may keep every row.
    expect(rows('customers', { $filter: "name eq 'x'" })).toBe(500);
  });

  test('a table without statistics, or an empty one: 0 (unknown)', () => {
    expect(rows('customers', {}, shop({}))).toBe(0);
    expect(rows('customers', { $filter: 'id eq 7' }, shop({ customers: 0 }))).toBe(0);
  });
});
