/**
 * `$metadata` from a schema fixture (docs/odata.md): every column kind's Edm type and facets,
 * keys, navigation properties with referential constraints, routines; the XML read by the OASIS
 * odata-csdl converter (strict) gives exactly the JSON form.
 */
import { describe, expect, test } from '@jest/globals';
// @ts-expect-error: odata-csdl ships no types
import csdl from 'odata-csdl';
import type { ColumnInfo } from '../../../src/db/schema-types.js';
import { csdlJson, csdlXml, serviceEntries } from '../../../src/odata/csdl.js';
import { buildModel, FULL_VIEW, type ODataModel } from '../../../src/odata/model.js';
import { ROUTINES } from '../fixtures/routines.js';
import { column, table } from '../fixtures/schema.js';
import { SHOP } from '../fixtures/shop.js';

const c = (name: string, dataType: string, columnType: string, more: Partial<ColumnInfo>) =>
  column(name, { dataType, columnType, numericPrecision: null, numericScale: null, ...more });

const everyType = table(
  'every type',
  [
    c('id', 'int', 'int(10) unsigned', { kind: 'integer', unsigned: true }),
    c('tiny', 'tinyint', 'tinyint(4)', { kind: 'integer' }),
    c('small', 'smallint', 'smallint(6)', { kind: 'integer' }),
    c('big', 'bigint', 'bigint(20)', { kind: 'integer', nullable: true }),
    c('big_unsigned', 'bigint', 'bigint(20) unsigned', { kind: 'integer', unsigned: true }),
    c('price', 'decimal', 'decimal(10,2)', {
      kind: 'decimal',
      numericPrecision: 10,
      numericScale: 2,
    }),
    c('ratio', 'double', 'double', { kind: 'float' }),
    c('single', 'float', 'float', { kind: 'float' }),
    c('born', 'year', 'year(4)', { kind: 'year' }),
    c('flags', 'bit', 'bit(8)', { kind: 'bit', numericPrecision: 8 }),
    c('day', 'date', 'date', { kind: 'date' }),
    c('at', 'datetime', 'datetime(6)', { kind: 'datetime' }),
    c('at_time', 'time', 'time(3)', { kind: 'string' }),
    c('label', 'varchar', 'varchar(20)', { kind: 'string', maxLength: 20 }),
    c('status', 'enum', "enum('new','old')", { kind: 'string', maxLength: 3 }),
    c('data', 'json', 'json', { kind: 'json' }),
    c('blob', 'varbinary', 'varbinary(16)', { kind: 'binary', maxLength: 16 }),
    c('place', 'point', 'point', { kind: 'geometry', srid: 4326 }),
    c('shape', 'geometry', 'geometry', { kind: 'geometry' }),
  ],
  ['id'],
);

const xmlOf = (model: ODataModel) => [...csdlXml(model)].join('');
const jsonOf = (model: ODataModel): unknown => JSON.parse([...csdlJson(model)].join(''));

describe('CSDL', () => {
  test('every column kind: its Edm type and facets', () => {
    const model = buildModel([everyType], [], FULL_VIEW);
    const json = jsonOf(model) as { tablegate: Record<string, unknown> };
    expect(json.tablegate.every_x0020_type).toEqual({
      $Kind: 'EntityType',
      $Key: ['id'],
      id: { $Type: 'Edm.Int64' },
      tiny: { $Type: 'Edm.SByte' },
      small: { $Type: 'Edm.Int16' },
      big: { $Type: 'Edm.Int64', $Nullable: true },
      big_unsigned: { $Type: 'Edm.Decimal', $Precision: 20, $Scale: 0 },
      price: { $Type: 'Edm.Decimal', $Precision: 10, $Scale: 2 },
      ratio: { $Type: 'Edm.Double' },
      single: { $Type: 'Edm.Single' },
      born: { $Type: 'Edm.Int16' },
      flags: { $Type: 'Edm.Byte' },
      day: { $Type: 'Edm.Date' },
      at: { $Type: 'Edm.DateTimeOffset', $Precision: 6 },
      at_time: { $Type: 'Edm.TimeOfDay', $Precision: 3 },
      label: { $MaxLength: 20 },
      status: { $MaxLength: 3 },
      data: {},
      blob: { $Type: 'Edm.Binary', $MaxLength: 16 },
      place: { $Type: 'Edm.GeometryPoint', $SRID: 4326 },
      shape: { $Type: 'Edm.Geometry', $SRID: 0 },
    });
    expect(csdl.xml2json(xmlOf(model), { strict: true })).toEqual(json);
  });

  test('the shop: keys, navigation properties, bindings, routines; XML and JSON agree', () => {
    const model = buildModel(SHOP, ROUTINES, FULL_VIEW);
    const json = jsonOf(model) as { tablegate: Record<string, Record<string, unknown>> };
    expect(csdl.xml2json(xmlOf(model), { strict: true })).toEqual(json);
    expect(json.tablegate.orders?.customer).toEqual({
      $Kind: 'NavigationProperty',
      $Type: 'tablegate.customers',
      $Nullable: true,
      $ReferentialConstraint: { customer_id: 'id' },
    });
    expect(json.tablegate.Container?.orders).toMatchObject({
      $NavigationPropertyBinding: { customer: 'customers', order_items: 'order_items' },
    });
    expect(serviceEntries(model).map((e) => e.kind)).toContain('EntitySet');
    // A procedure and a function of one name: the function is served, the procedure left out.
    expect(model.functions.has('twin')).toBe(true);
    expect(model.actions.has('twin')).toBe(false);
  });

  test('a set named Container moves the container aside', () => {
    const model = buildModel([table('Container', [column('id')], ['id'])], [], FULL_VIEW);
    expect(model.container).toBe('Container1');
    const json = jsonOf(model) as Record<string, unknown>;
    expect(json.$EntityContainer).toBe('tablegate.Container1');
    expect(csdl.xml2json(xmlOf(model), { strict: true })).toEqual(json);
  });

  test('a service of nothing: only the container, in both forms', () => {
    const model = buildModel([], [], FULL_VIEW);
    expect([...csdlJson(model)].join('')).toBe(
      '{"$Version":"4.0","$EntityContainer":"tablegate.Container","tablegate":{"Container":{"$Kind":"EntityContainer"}}}',
    );
    expect(xmlOf(model)).toBe(
      '<?xml version="1.0" encoding="utf-8"?><edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0"><edmx:DataServices><Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="tablegate"><EntityContainer Name="Container"></EntityContainer></Schema></edmx:DataServices></edmx:Edmx>',
    );
  });

  test('the JSON pieces of many sets join to the text JSON.stringify writes', () => {
    const many = Array.from({ length: 1000 }, (_, i) => table(`t${i}`, [column('id')], ['id']));
    const pieces = [...csdlJson(buildModel([...SHOP, ...many], ROUTINES, FULL_VIEW))];
    // The container is cut into pieces too.
    expect(pieces.length).toBeGreaterThan(SHOP.length + many.length + 2);
    const text = pieces.join('');
    expect(JSON.stringify(JSON.parse(text))).toBe(text);
  });

  test('a table without any column that can be a key has no set', () => {
    const model = buildModel(
      [table('loose', [column('n', { nullable: true, hasDefault: true })], [])],
      [],
      FULL_VIEW,
    );
    expect([...model.sets.keys()]).toEqual([]);
  });
});
