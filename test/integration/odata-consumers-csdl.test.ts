/**
 * OASIS's own CSDL tooling reads the gateway's `$metadata` (docs/odata.md): `odata-csdl` (the
 * OData TC's XML → JSON converter, strict mode: any element, attribute or text out of place
 * throws) converts the served CSDL XML for each role, the result validates against the TC's
 * CSDL JSON schema (schemas/csdl.schema.json of the same package), and it is the same document
 * the gateway serves as CSDL JSON. The role decides what is in it: the clerk's products have no
 * `cost`.
 */
import { createRequire } from 'node:module';
import { describe, expect, test } from '@jest/globals';
import Ajv from 'ajv';
import {
  type ConsumerFixture,
  recorded,
  type Target,
  useConsumerFixture,
  ZIP,
} from '../helpers/odata-consumers.js';

const require = createRequire(import.meta.url);
const { xml2json } = require('odata-csdl') as {
  xml2json: (xml: string, options?: { strict?: boolean; messages?: unknown[] }) => Csdl;
};
const CSDL_SCHEMA = require('odata-csdl/schemas/csdl.schema.json') as object;

type Csdl = Record<string, unknown> & { $Version: string; $EntityContainer: string };
type Members = Record<string, Record<string, unknown>>;

const fixture = useConsumerFixture();

async function metadata(target: Target, query = '') {
  const response = await fetch(`${target.service}$metadata${query}`, { headers: target.headers });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    text: await response.text(),
  };
}

/** The entity type of a set, and the container, from a CSDL JSON document. */
function entityType(csdl: Csdl, set: string): Members {
  const [namespace, container] = splitQualified(csdl.$EntityContainer);
  const sets = (csdl[namespace] as Members)[container] as Record<string, { $Type: string }>;
  const setEntry = sets[set];
  if (!setEntry) throw new Error(`no entity set ${set} in ${JSON.stringify(sets)}`);
  const [typeNamespace, typeName] = splitQualified(setEntry.$Type);
  return (csdl[typeNamespace] as Record<string, Members>)[typeName] as Members;
}

/**
 * The document with `$Precision: 0` left out: odata-csdl writes the temporal types' default (0,
 * CSDL XML 4.0 §6.2.3) where the XML has no Precision, and CSDL JSON leaves a default out.
 */
function withoutDefaultPrecision(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDefaultPrecision);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, member]) => !(key === '$Precision' && member === 0))
      .map(([key, member]) => [key, withoutDefaultPrecision(member)]),
  );
}

function splitQualified(name: string): [string, string] {
  const dot = name.lastIndexOf('.');
  return [name.slice(0, dot), name.slice(dot + 1)];
}

const ROLES = [
  ['open mode', (f: ConsumerFixture) => f.targets[0] as Target, true],
  ['the clerk (bearer)', (f: ConsumerFixture) => f.targets[1] as Target, false],
  [
    'the boss (bearer)',
    (f: ConsumerFixture) =>
      ({
        ...(f.targets[1] as Target),
        headers: { Authorization: `Bearer ${f.tokens.boss}` },
      }) as Target,
    true,
  ],
] as const;

describe.each(ROLES)('$metadata for %s', (_name, pick, seesCost) => {
  test('odata-csdl converts it in strict mode; the result is valid CSDL JSON', async () => {
    const target = pick(fixture);
    await recorded(target, async () => {
      const answer = await metadata(target);
      expect(answer.status).toBe(200);
      expect(answer.type).toMatch(/^application\/xml/);
      const messages: unknown[] = [];
      const csdl = xml2json(answer.text, { strict: true, messages });
      expect(messages).toEqual([]);
      expect(csdl.$Version).toBe('4.0');
      const ajv = new Ajv({ strict: false, allErrors: true });
      const valid = ajv.validate(CSDL_SCHEMA, csdl);
      expect(ajv.errors ?? []).toEqual([]);
      expect(valid).toBe(true);
    });
  });

  test('products: key, Edm types with facets, the name rule, the role’s columns', async () => {
    const target = pick(fixture);
    await recorded(target, async () => {
      const csdl = xml2json((await metadata(target)).text, { strict: true });
      const products = entityType(csdl, 'products');
      expect(products.$Kind).toBe('EntityType');
      expect(products.$Key).toEqual(['id']);
      expect(products.id).toEqual({ $Type: 'Edm.Int32' });
      expect(products.name).toEqual({ $MaxLength: 60 });
      expect(products.price).toEqual({ $Type: 'Edm.Decimal', $Precision: 10, $Scale: 2 });
      expect(products[ZIP]).toEqual({ $MaxLength: 10, $Nullable: true });
      expect(products.added_at).toEqual({ $Type: 'Edm.DateTimeOffset', $Precision: 0 });
      if (seesCost) {
        expect(products.cost).toEqual({
          $Type: 'Edm.Decimal',
          $Precision: 10,
          $Scale: 2,
          $Nullable: true,
        });
      } else {
        expect(products.cost).toBeUndefined();
      }
    });
  });

  test('order_items: navigation properties with referential constraints from the foreign keys', async () => {
    const target = pick(fixture);
    await recorded(target, async () => {
      const csdl = xml2json((await metadata(target)).text, { strict: true });
      const items = entityType(csdl, 'order_items');
      const navigation = Object.entries(items).filter(
        ([, member]) => typeof member === 'object' && member.$Kind === 'NavigationProperty',
      );
      const constraints = Object.fromEntries(
        navigation.map(([, member]) => [
          splitQualified(member.$Type as string)[1],
          member.$ReferentialConstraint,
        ]),
      );
      expect(Object.values(constraints)).toEqual(
        expect.arrayContaining([{ order_id: 'id' }, { product_id: 'id' }]),
      );
      const orders = entityType(csdl, 'orders');
      const toItems = Object.values(orders).filter(
        (member) =>
          typeof member === 'object' &&
          member.$Kind === 'NavigationProperty' &&
          member.$Collection === true,
      );
      expect(toItems).toHaveLength(1);
    });
  });

  test('the CSDL JSON the gateway serves is the XML’s conversion', async () => {
    const target = pick(fixture);
    await recorded(target, async () => {
      const csdl = xml2json((await metadata(target)).text, { strict: true });
      const json = await metadata(target, '?$format=json');
      expect(json.status).toBe(200);
      expect(json.type).toMatch(/^application\/json/);
      expect(withoutDefaultPrecision(JSON.parse(json.text))).toEqual(withoutDefaultPrecision(csdl));
    });
  });
});
