/**
 * Apache Olingo's OData client for JavaScript (`ts-odatajs`, its Node build: node:http) against
 * the gateway (docs/odata.md): `oData.read` of `$metadata` through its metadata handler, and
 * `oData.read` / `oData.request` with its JSON handler (its own Accept, OData-Version and
 * OData-MaxVersion headers) for reads with `$filter`, `$orderby`/`$skip`/`$top`, `$count`, a key
 * read, and a POST, PATCH and DELETE, in open mode and as the clerk.
 */
import { createRequire } from 'node:module';
import { describe, expect, test } from '@jest/globals';
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

const require = createRequire(import.meta.url);
// biome-ignore lint/suspicious/noExplicitAny: odatajs's callbacks hand back untyped payloads
type Any = any;
const odatajs = require('ts-odatajs') as { oData: Any };

const fixture = useConsumerFixture();

interface Result {
  readonly data: Any;
  readonly response: { statusCode: number; headers: Record<string, string>; body: string };
}

/** `oData.request` as a promise; its error callback's error as the rejection. */
function request(
  target: Target,
  spec: Record<string, unknown>,
  handler?: unknown,
): Promise<Result> {
  return new Promise((resolve, reject) => {
    odatajs.oData.request(
      { ...spec, headers: { ...target.headers, ...(spec.headers as object) } },
      (data: Any, response: Result['response']) => resolve({ data, response }),
      (error: Any) =>
        reject(
          Object.assign(
            new Error(`odatajs: ${error.message} ${JSON.stringify(error.response ?? {})}`),
            { odata: error },
          ),
        ),
      handler,
    );
  });
}

function ids(data: Any): number[] {
  return (data.value as { id: number }[]).map((row) => row.id);
}

describe.each(MODES)('ts-odatajs, %s', (mode) => {
  test('reads $metadata through its metadata handler', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const { data } = await request(
        t,
        { requestUri: `${t.service}$metadata` },
        odatajs.oData.metadataHandler,
      );
      const schemas = data.dataServices.schema as Any[];
      const types = schemas.flatMap((schema) => schema.entityType ?? []);
      const products = types.find((type) => (type.property as Any[]).some((p) => p.name === ZIP));
      expect(products.key.propertyRef).toEqual([{ name: 'id' }]);
      const price = (products.property as Any[]).find((p) => p.name === 'price');
      expect(price).toEqual(
        expect.objectContaining({ type: 'Edm.Decimal', precision: '10', scale: '2' }),
      );
      const sets = schemas.flatMap((schema) => schema.entityContainer?.entitySet ?? []);
      expect(sets.map((set: Any) => set.name).sort()).toEqual([
        'order_items',
        'orders',
        'products',
      ]);
    });
  });

  test('oData.read of a set: every product', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const { data, response } = await request(t, { requestUri: `${t.service}products` });
      expect(response.statusCode).toBe(200);
      expect(data['@odata.context']).toMatch(/\$metadata#products$/);
      expect(ids(data)).toEqual(PRODUCTS.map((p) => p.id));
      expect(data.value[0]).toEqual(expect.objectContaining(expectedProduct(1)));
    });
  });

  test('$filter, also by a mapped name', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const filtered = await request(t, { requestUri: `${t.service}products?$filter=price gt 10` });
      expect(ids(filtered.data)).toEqual(CASES.filtered);
      const byZip = await request(t, {
        requestUri: `${t.service}products?$filter=${ZIP} eq '10005'`,
      });
      expect(ids(byZip.data)).toEqual(CASES.byZip);
    });
  });

  test('$orderby, $skip and $top', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const { data } = await request(t, {
        requestUri: `${t.service}products?$orderby=price desc&$skip=2&$top=3`,
      });
      expect(ids(data)).toEqual(CASES.paged);
    });
  });

  test('server-driven paging: Prefer odata.maxpagesize, then each @odata.nextLink', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const seen: number[] = [];
      let next: string | undefined = `${t.service}products?$orderby=price desc`;
      let pages = 0;
      while (next !== undefined && pages < 10) {
        const { data } = await request(t, {
          requestUri: next,
          headers: { Prefer: 'odata.maxpagesize=5' },
        });
        seen.push(...ids(data));
        next = data['@odata.nextLink'];
        pages += 1;
      }
      expect(pages).toBe(3);
      expect(seen).toEqual(PRODUCTS.map((p) => p.id).reverse());
      const preference = t.proxy.exchanges[0]?.responseHeaders?.['preference-applied'];
      expect(preference).toBe('odata.maxpagesize=5');
    });
  });

  test('$count=true', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const { data } = await request(t, {
        requestUri: `${t.service}products?$filter=price gt 10&$count=true&$top=1`,
      });
      expect(data['@odata.count']).toBe(CASES.count);
      expect(ids(data)).toEqual([CASES.filtered[0]]);
    });
  });

  test('a key read', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const { data } = await request(t, { requestUri: `${t.service}products(4)` });
      expect(data).toEqual(expect.objectContaining(expectedProduct(4)));
      expect(data['@odata.context']).toMatch(/\$metadata#products\/\$entity$/);
    });
  });

  test('POST, PATCH and DELETE through oData.request', async () => {
    const t = targetOf(fixture, mode);
    await recorded(t, async () => {
      const created = await request(t, {
        requestUri: `${t.service}products`,
        method: 'POST',
        data: {
          name: `odatajs ${mode}`,
          price: 4.5,
          [ZIP]: '45454',
          added_at: '2026-04-05T06:07:08Z',
        },
      });
      expect(created.response.statusCode).toBe(201);
      const id = created.data.id as number;
      expect(created.data).toEqual(
        expect.objectContaining({ id, name: `odatajs ${mode}`, price: 4.5, [ZIP]: '45454' }),
      );
      expect(await productRow(fixture.db, id)).toEqual(
        expect.objectContaining({
          name: `odatajs ${mode}`,
          price: '4.50',
          added_at: '2026-04-05 06:07:08',
        }),
      );

      const patched = await request(t, {
        requestUri: `${t.service}products(${id})`,
        method: 'PATCH',
        data: { price: 5.25 },
      });
      expect([200, 204]).toContain(patched.response.statusCode);
      expect((await productRow(fixture.db, id))?.price).toBe('5.25');

      const deleted = await request(t, {
        requestUri: `${t.service}products(${id})`,
        method: 'DELETE',
      });
      expect(deleted.response.statusCode).toBe(204);
      expect(await productRow(fixture.db, id)).toBeUndefined();
    });
  });

  test('an error comes back in the OData form with the gateway’s code', async () => {
    const t = targetOf(fixture, mode);
    const failed = await request(t, { requestUri: `${t.service}products(999)` }).then(
      () => null,
      (error: Any) => error.odata,
    );
    expect(failed.response.statusCode).toBe(404);
    expect(JSON.parse(failed.response.body)).toEqual({
      error: { code: expect.any(String), message: expect.any(String) },
    });
  });
});
