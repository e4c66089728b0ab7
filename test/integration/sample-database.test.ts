/**
 * A well-known public sample database, served as it is: a subset of Sakila
 * (test/fixtures/sakila-subset.sql). Every table and view is read through the gateway and
 * compared value by value with what MariaDB itself says of each value (test/helpers/
 * expected-rows.ts); the views MySQL cannot write are read-only; the GEOMETRY locations are
 * GeoJSON; relations follow Sakila's foreign keys.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { expectedRows } from '../helpers/expected-rows.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SQL = readFileSync(
  path.join(import.meta.dirname, '..', 'fixtures', 'sakila-subset.sql'),
  'utf8',
);

let db: TestDatabase;
let gw: TestGateway;

beforeAll(async () => {
  db = await createTestDatabase(SQL);
  gw = await startTestGateway(db.name);
});
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(gw.url + url);
  return { status: response.status, body: await response.json() };
}

/** Every base table and view of the sample, with a total order of its rows. */
const TABLES: readonly [string, string][] = [
  ['language', 'language_id'],
  ['actor', 'actor_id'],
  ['category', 'category_id'],
  ['film', 'film_id'],
  ['film_actor', 'actor_id, film_id'],
  ['film_category', 'film_id, category_id'],
  ['country', 'country_id'],
  ['city', 'city_id'],
  ['address', 'address_id'],
  ['staff', 'staff_id'],
  ['customer', 'customer_id'],
  ['payment', 'payment_id'],
  ['customer_list', 'ID'],
  ['film_list', 'FID, category'],
  ['sales_by_staff', 'staff_id'],
  ['actor_names', 'actor_id'],
];

test('the gateway serves every table and view of the sample', async () => {
  const [rows] = await db.admin.query(
    'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME',
  );
  expect((rows as { name: string }[]).map((row) => row.name)).toEqual(
    TABLES.map(([name]) => name).sort(),
  );
});

test.each(TABLES)('%s: every value as MariaDB has it', async (table, orderBy) => {
  const expected = await expectedRows(db.admin, table, orderBy);
  expect(expected.length).toBeGreaterThan(0);
  const order = orderBy
    .split(', ')
    .map((name) => encodeURIComponent(name))
    .join(',');
  const { status, body } = await get(`/table/${table}/read?$orderby=${order}`);
  expect(status).toBe(200);
  expect(body).toEqual(expected);
  // The same values one row at a time (the small-read path) and in pages of one.
  const first = await get(`/table/${table}/read?$orderby=${order}&$top=1`);
  expect(first.body).toEqual(expected.slice(0, 1));
});

test('what real clients ask of it', async () => {
  const films = await get(
    `/table/film/read?$select=title,rating,special_features,rental_rate&$filter=${encodeURIComponent(
      "rating in ('PG','G') and rental_rate lt '5'",
    )}&$orderby=title`,
  );
  expect(films.body).toEqual([
    {
      title: 'ACADEMY DINOSAUR',
      rating: 'PG',
      special_features: 'Deleted Scenes,Behind the Scenes',
      rental_rate: 0.99,
    },
    {
      title: 'ACE GOLDFINGER',
      rating: 'G',
      special_features: 'Trailers,Deleted Scenes',
      rental_rate: 4.99,
    },
  ]);
  const located = await get(
    `/table/address/read?$select=address,location&$filter=${encodeURIComponent('address_id eq 1')}&$expand=city($select=city;$expand=country($select=country))`,
  );
  expect(located.body).toEqual([
    {
      address: '47 MySakila Drive',
      location: { type: 'Point', coordinates: [-112.8185647, 49.6999986] },
      city: { city: 'Lethbridge', country: { country: 'Canada' } },
    },
  ]);
  const payments = await get(
    `/table/customer/read?$select=first_name&$filter=customer_id eq 1&$expand=payment($select=amount,payment_date)`,
  );
  expect(payments.body).toEqual([
    {
      first_name: 'MARY',
      payment: [
        { amount: 2.99, payment_date: '2005-05-25 11:30:37.000' },
        { amount: 0.99, payment_date: '2005-05-28 10:35:23.250' },
      ],
    },
  ]);
  const zip = await get(
    `/table/customer_list/read?$select=name,${encodeURIComponent('"zip code"')}&$filter=${encodeURIComponent('"zip code" eq \'35200\'')}`,
  );
  expect(zip.body).toEqual([{ name: 'MARY SMITH', 'zip code': '35200' }]);
});

test('the views MySQL cannot write are read-only; the one it can takes writes', async () => {
  for (const view of ['film_list', 'sales_by_staff']) {
    const response = await fetch(`${gw.url}/table/${view}/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"title":"x"}',
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('');
  }
  const created = await fetch(`${gw.url}/table/actor_names/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ first_name: 'GRACE', last_name: 'MOSTEL' }),
  });
  expect(await created.json()).toEqual({
    success: true,
    message: 'Data inserted successfully',
    insertId: 5,
    affectedRows: 1,
  });
});
