import { type ForeignKey, nameRelations } from '../../../src/db/relations.js';
import type { Relation, TableInfo } from '../../../src/db/schema-types.js';
import { column, table } from '../fixtures/schema.js';

/** Tables with fresh relation maps, named from `keys`; gives `table → [name, kind, target, local→remote]`. */
function relationsOf(tables: TableInfo[], keys: ForeignKey[]) {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const maps = new Map(tables.map((t) => [t.name, t.relations as Map<string, Relation>]));
  nameRelations(byName, maps, keys);
  return Object.fromEntries(
    tables.map((t) => [
      t.name,
      [...t.relations.values()].map((r) => [
        r.name,
        r.kind,
        r.target.name,
        r.on.map((p) => `${p.local.name}=${p.remote.name}`).join(','),
      ]),
    ]),
  );
}

const fk = (
  name: string,
  from: string,
  columns: string[],
  to: string,
  referenced: string[] = ['id'],
): ForeignKey => ({
  name,
  table: from,
  columns,
  referencedTable: to,
  referencedColumns: referenced,
});

test('a key ending in _id names the to-one; the referenced table gets a to-many named after the referencing one', () => {
  const customers = table('customers', [column('id')], ['id']);
  const orders = table('orders', [column('id'), column('customer_id')], ['id']);
  expect(
    relationsOf([customers, orders], [fk('fk1', 'orders', ['customer_id'], 'customers')]),
  ).toEqual({
    customers: [['orders', 'many', 'orders', 'id=customer_id']],
    orders: [['customer', 'one', 'customers', 'customer_id=id']],
  });
});

test('two keys to one table: to-ones by column, to-manys as <C>_by_<c1>', () => {
  const addresses = table('addresses', [column('id')], ['id']);
  const orders = table(
    'orders',
    [column('id'), column('billing_address_id'), column('shipping_address_id')],
    ['id'],
  );
  expect(
    relationsOf(
      [addresses, orders],
      [
        fk('b', 'orders', ['billing_address_id'], 'addresses'),
        fk('s', 'orders', ['shipping_address_id'], 'addresses'),
      ],
    ),
  ).toEqual({
    addresses: [
      ['orders_by_billing_address_id', 'many', 'orders', 'id=billing_address_id'],
      ['orders_by_shipping_address_id', 'many', 'orders', 'id=shipping_address_id'],
    ],
    orders: [
      ['billing_address', 'one', 'addresses', 'billing_address_id=id'],
      ['shipping_address', 'one', 'addresses', 'shipping_address_id=id'],
    ],
  });
});

test("a to-many equal to a to-one name of the referenced table becomes <C>_by_<c1> (docs/relations.md's employee and store)", () => {
  const employee = table('employee', [column('id'), column('store_id')], ['id']);
  const store = table('store', [column('id'), column('manager_employee_id')], ['id']);
  expect(
    relationsOf(
      [employee, store],
      [
        fk('e', 'employee', ['store_id'], 'store'),
        fk('m', 'store', ['manager_employee_id'], 'employee'),
      ],
    ),
  ).toEqual({
    employee: [
      ['store', 'one', 'store', 'store_id=id'],
      ['store_by_manager_employee_id', 'many', 'store', 'id=manager_employee_id'],
    ],
    store: [
      ['manager_employee', 'one', 'employee', 'manager_employee_id=id'],
      ['employee', 'many', 'employee', 'id=store_id'],
    ],
  });
});

test('a to-one equal to a column of the table becomes <P>_by_<c1>; a to-many equal to a column too', () => {
  // `country` is a column of cities and the to-one name of cities.country_id; `cities` a column of countries.
  const countries = table('countries', [column('id'), column('cities')], ['id']);
  const cities = table('cities', [column('id'), column('country'), column('country_id')], ['id']);
  expect(
    relationsOf([countries, cities], [fk('c', 'cities', ['country_id'], 'countries')]),
  ).toEqual({
    countries: [['cities_by_country_id', 'many', 'cities', 'id=country_id']],
    cities: [['countries_by_country_id', 'one', 'countries', 'country_id=id']],
  });
});

test('a self-reference, a composite key and a key that is only the suffix name the tables', () => {
  const people = table('people', [column('id'), column('manager_id')], ['id']);
  const orders = table('orders', [column('id'), column('line')], ['id', 'line']);
  const shipments = table('shipments', [column('order_id'), column('order_line'), column('_id')]);
  expect(
    relationsOf(
      [people, orders, shipments],
      [
        fk('self', 'people', ['manager_id'], 'people'),
        fk('ol', 'shipments', ['order_id', 'order_line'], 'orders', ['id', 'line']),
        fk('bare', 'shipments', ['_id'], 'people'),
      ],
    ),
  ).toEqual({
    people: [
      ['manager', 'one', 'people', 'manager_id=id'],
      ['people', 'many', 'people', 'id=manager_id'],
      ['shipments', 'many', 'shipments', 'id=_id'],
    ],
    orders: [['shipments', 'many', 'shipments', 'id=order_id,line=order_line']],
    shipments: [
      ['orders', 'one', 'orders', 'order_id=id,order_line=line'],
      ['people', 'one', 'people', '_id=id'],
    ],
  });
});

test('two keys to one table without _id columns: each to-one is <P>_by_<c1>', () => {
  const users = table('users', [column('id')], ['id']);
  const notes = table('notes', [column('id'), column('author'), column('editor')], ['id']);
  expect(
    relationsOf(
      [users, notes],
      [fk('a', 'notes', ['author'], 'users'), fk('e', 'notes', ['editor'], 'users')],
    ).notes,
  ).toEqual([
    ['users_by_author', 'one', 'users', 'author=id'],
    ['users_by_editor', 'one', 'users', 'editor=id'],
  ]);
});

test('a key to a table that is not served (another database, the users table) gives no relation', () => {
  const orders = table('orders', [column('id'), column('user_id')], ['id']);
  expect(
    relationsOf([orders], [fk('u', 'orders', ['user_id'], 'users_created_by_tablegate')]),
  ).toEqual({ orders: [] });
});
