/** OData resource paths and key predicates (docs/odata.md, "Keys"), and key forms against a set. */
import { describe, expect, test } from '@jest/globals';
import { entityKey, keyPredicate } from '../../../src/odata/key.js';
import { buildModel, FULL_VIEW, type ODataSet } from '../../../src/odata/model.js';
import { parsePath, parsePredicate } from '../../../src/odata/path.js';
import { column, table, text } from '../fixtures/schema.js';

describe('parsePath', () => {
  test.each([
    ['', { kind: 'service' }],
    ['$metadata', { kind: 'metadata' }],
    ['orders', { kind: 'resource', name: 'orders', predicate: null, rest: [] }],
    ['orders/', { kind: 'resource', name: 'orders', predicate: null, rest: [] }],
    ['orders/$count', { kind: 'resource', name: 'orders', predicate: null, rest: ['$count'] }],
    [
      "orders('a%2Fb')/customer",
      {
        kind: 'resource',
        name: 'orders',
        predicate: [{ name: null, text: "'a/b'" }],
        rest: ['customer'],
      },
    ],
    ['twice()', { kind: 'resource', name: 'twice', predicate: [], rest: [] }],
  ])('%j', (raw, path) => {
    expect(parsePath(raw)).toEqual(path);
  });

  test('refusals', () => {
    expect(() => parsePath('orders(5')).toThrow("'orders(5' has no closing parenthesis");
    expect(() => parsePath('orders(%E0%A4%A)')).toThrow('not valid percent-encoding');
  });
});

describe('parsePredicate', () => {
  test.each([
    ['5', [{ name: null, text: '5' }]],
    ["'a''b'", [{ name: null, text: "'a''b'" }]],
    [
      "k1=1,k2='x,y'",
      [
        { name: 'k1', text: '1' },
        { name: 'k2', text: "'x,y'" },
      ],
    ],
    ["k = 'a=b'", [{ name: 'k', text: "'a=b'" }]],
    ['at=2024-01-01T00:00:00Z', [{ name: 'at', text: '2024-01-01T00:00:00Z' }]],
  ])('%j', (inner, parts) => {
    expect(parsePredicate(inner)).toEqual(parts);
  });

  test.each([
    ["'open", 'has no closing quote'],
    ['1,2', 'a key of several properties names each'],
    ['k1=1,', 'an empty part'],
  ])('%j is refused', (inner, message) => {
    expect(() => parsePredicate(inner)).toThrow(message);
  });
});

describe('entityKey', () => {
  const single = table('customers', [column('id'), text('name')], ['id']);
  const pair = table(
    'items',
    [column('order_id'), column('line'), text('code')],
    ['order_id', 'line'],
  );
  const keyless = table(
    'logs',
    [text('code'), text('note', { nullable: true, hasDefault: true })],
    [],
  );
  const model = buildModel([single, pair, keyless], [], FULL_VIEW);
  const set = (name: string) => model.sets.get(name) as ODataSet;

  test('one column of a MySQL key: a key read', () => {
    expect(entityKey(set('customers'), parsePredicate('5'))).toEqual({
      kind: 'key',
      match: { key: 'id', value: { kind: 'number', text: '5' }, bare: '5' },
    });
    expect(entityKey(set('customers'), parsePredicate('id=5'))).toMatchObject({ kind: 'key' });
  });

  test('a composite key and a formed key: a filter on every key column', () => {
    expect(entityKey(set('items'), parsePredicate('line=2,order_id=10'))).toEqual({
      kind: 'filter',
      filter: 'order_id eq 10 and line eq 2',
    });
    expect(set('logs').keyKind).toBe('formed');
    expect(entityKey(set('logs'), parsePredicate('0a1b-2c'))).toEqual({
      kind: 'filter',
      filter: "code eq '0a1b-2c'",
    });
  });

  test('a key that does not fit the set', () => {
    expect(() => entityKey(set('items'), parsePredicate('10'))).toThrow(
      "The key of 'items' has 2 properties: (order_id=…,line=…)",
    );
    expect(() => entityKey(set('items'), parsePredicate('order_id=10'))).toThrow(
      "'line' is missing",
    );
    expect(() => entityKey(set('items'), parsePredicate('order_id=10,line=1,code=1'))).toThrow(
      'it names other properties',
    );
  });

  test('keyPredicate writes a key from its values', () => {
    expect(keyPredicate(set('customers'), ['5'])).toBe('(5)');
    expect(keyPredicate(set('items'), ['10', '2'])).toBe('(order_id=10,line=2)');
    expect(keyPredicate(set('logs'), ['"it\'s"'])).toBe("('it''s')");
  });
});
