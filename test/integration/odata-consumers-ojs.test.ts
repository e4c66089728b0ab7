/**
 * o.js (npm `odata` 2, fetch-based) against the gateway (docs/odata.md), as its README uses it:
 * `o(root, config).get(resource).query({ $filter, $orderby, $skip, $top })`, `$count=true` through
 * `fetch()` (o.js's `query()` keeps only `value`), `/$count`, a key read, and `post`, `patch` and
 * `delete`, in open mode and as the clerk (the token in o.js's `headers`).
 */
import { describe, expect, test } from '@jest/globals';
import { o } from 'odata';
import {
  CASES,
  expectedProduct,
  MODES,
  PRODUCTS,
  productRow,
  recorded,
  type Target,
  targetOf,
  useConsumerFixture,
  ZIP,
} from '../helpers/odata-consumers.js';

const fixture = useConsumerFixture();

/** An o.js handler for the target, its headers as o.js's default ones plus who calls. */
function handler(target: Target) {
  return o(target.service, {
    headers: new Headers({ 'Content-Type': 'application/json', ...target.headers }),
  });
}

type Row = { id: number } & Record<string, unknown>;
const ids = (rows: Row[]) => rows.map((row) => row.id);

describe.each(MODES)('o.js, %s', (mode) => {
  test('get: every product', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const rows = (await handler(t).get('products').query()) as Row[];
      expect(ids(rows)).toEqual(PRODUCTS.map((p) => p.id));
      expect(rows[1]).toEqual(expect.objectContaining(expectedProduct(2)));
    });
  });

  test('$filter, also by a mapped name', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const filtered = (await handler(t)
        .get('products')
        .query({ $filter: 'price gt 10' })) as Row[];
      expect(ids(filtered)).toEqual(CASES.filtered);
      const byZip = (await handler(t)
        .get('products')
        .query({ $filter: `${ZIP} eq '10005'` })) as Row[];
      expect(ids(byZip)).toEqual(CASES.byZip);
    });
  });

  test('$orderby, $skip and $top', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const page = (await handler(t)
        .get('products')
        .query({ $orderby: 'price desc', $skip: 2, $top: 3 })) as Row[];
      expect(ids(page)).toEqual(CASES.paged);
    });
  });

  test('$count=true (through fetch) and /$count', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const response = (await handler(t)
        .get('products')
        .fetch({ $filter: 'price gt 10', $count: true, $top: 2 })) as Response;
      const body = (await response.json()) as { '@odata.count': number; value: Row[] };
      expect(body['@odata.count']).toBe(CASES.count);
      expect(ids(body.value)).toEqual(CASES.filtered.slice(0, 2));
      const count = await handler(t).get('products/$count').query({ $filter: 'price gt 10' });
      expect(count).toBe(CASES.count);
    });
  });

  test('a key read', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const one = (await handler(t).get('products(6)').query()) as Row;
      expect(one).toEqual(expect.objectContaining(expectedProduct(6)));
    });
  });

  test('$expand of a to-many navigation with nested options', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const orders = (await handler(t).get('orders').query({
        $expand: 'order_items($orderby=id desc;$select=id,quantity)',
        $orderby: 'id',
      })) as Row[];
      expect(orders.map((order) => [order.id, order.order_items])).toEqual([
        [
          1,
          [
            { id: 2, quantity: 1 },
            { id: 1, quantity: 2 },
          ],
        ],
        [2, [{ id: 3, quantity: 5 }]],
      ]);
    });
  });

  test('post, patch and delete', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const created = (await handler(t)
        .post('products', {
          name: `o.js ${mode}`,
          price: 6.5,
          [ZIP]: '65656',
          added_at: '2026-05-06T07:08:09Z',
        })
        .query()) as Row;
      const id = created.id;
      expect(id).toBeGreaterThan(12);
      expect(created).toEqual(
        expect.objectContaining({ name: `o.js ${mode}`, price: 6.5, [ZIP]: '65656' }),
      );
      expect(await productRow(fixture.db, id)).toEqual(
        expect.objectContaining({ price: '6.50', zip: '65656', added_at: '2026-05-06 07:08:09' }),
      );

      await handler(t)
        .patch(`products(${id})`, { name: `o.js ${mode} patched` })
        .query();
      expect((await productRow(fixture.db, id))?.name).toBe(`o.js ${mode} patched`);

      const deleted = (await handler(t).delete(`products(${id})`).fetch()) as Response;
      expect(deleted.status).toBe(204);
      expect(await productRow(fixture.db, id)).toBeUndefined();
    });
  });

  test('the role decides: a column hidden from the clerk is unknown to its write too, as on REST (400)', async () => {
    const t = targetOf(fixture, mode);
    const response = (await handler(t)
      .post('products', { name: 'with cost', price: 1, added_at: '2026-01-01T00:00:00Z', cost: 1 })
      .fetch()) as Response;
    if (mode === 'open') {
      expect(response.status).toBe(201);
      return;
    }
    expect(response.status).toBe(400);
    expect(response.headers.get('odata-version')).toBe('4.0');
    expect(await response.json()).toEqual({
      error: {
        code: 'UNKNOWN_COLUMN',
        message: "Column 'cost' does not exist in table 'products'",
      },
    });
    const [rows] = (await fixture.db.admin.query(
      "SELECT COUNT(*) AS n FROM products WHERE name = 'with cost'",
    )) as unknown as [{ n: number }[]];
    expect(Number(rows[0]?.n)).toBe(0);
  });
});
