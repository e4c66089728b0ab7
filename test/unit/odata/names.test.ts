/** The OData name rule (docs/odata.md, "Names"): a bijection between names and identifiers. */
import { describe, expect, test } from '@jest/globals';
import { decodeName, decodeQueryText, encodeName, queryName } from '../../../src/odata/names.js';

describe('encodeName', () => {
  test.each([
    ['id', 'id'],
    ['zip code', 'zip_x0020_code'],
    ['2fa', '_x0032_fa'],
    ['order-items', 'order_x002D_items'],
    ['größe', 'größe'],
    ['名前', '名前'],
    ['a_b', 'a_b'],
    ['_x', '_x'],
    ['a_x0020_b', 'a_x005F_x0020_b'],
    ['$price', '_x0024_price'],
    ['a.b', 'a_x002E_b'],
    ['😀', '_xD83D__xDE00_'],
    ['', ''],
  ])('%j → %j, and back', (name, identifier) => {
    expect(encodeName(name)).toBe(identifier);
    if (name !== '') expect(decodeName(identifier)).toBe(name);
  });

  test('distinct names never share an identifier', () => {
    const names = ['zip code', 'zip_x0020_code', 'zip_x005F_x0020_code', 'zip-code', 'zip_code'];
    const identifiers = names.map(encodeName);
    expect(new Set(identifiers).size).toBe(names.length);
    for (const [i, id] of identifiers.entries()) expect(decodeName(id)).toBe(names[i]);
  });
});

describe('decodeName', () => {
  test('an identifier no name encodes to is no name', () => {
    // `A` encodes as itself, so `_x0041_` stands for nothing.
    expect(decodeName('_x0041_')).toBeNull();
    expect(decodeName('zip code')).toBeNull();
    expect(decodeName('2fa')).toBeNull();
    expect(decodeName('')).toBeNull();
  });
});

describe('decodeQueryText', () => {
  test.each([
    ['zip_x0020_code eq 5', '"zip code" eq 5'],
    ["name eq 'zip_x0020_code'", "name eq 'zip_x0020_code'"],
    ['"zip_x0020_code" eq 5', '"zip_x0020_code" eq 5'],
    ['order_x002D_items/any(i: i/qty gt 1)', '"order-items"/any(i: i/qty gt 1)'],
    ['name,zip_x0020_code desc', 'name,"zip code" desc'],
    ['a_x0022_b eq 1', '"a""b" eq 1'],
    ["contains(name,'x')", "contains(name,'x')"],
  ])('%j → %j', (text, decoded) => {
    expect(decodeQueryText(text)).toBe(decoded);
  });

  test("an identifier whose escapes are not the rule's names nothing and is refused", () => {
    // Passed on as it is, `a_x0041_b` would address a column spelled so, whose name is `a_x005F_x0041_b`.
    for (const text of ['_x0041_ eq 1', '$select=a_x0041_b', 'a_x00e9_b eq 1']) {
      expect(() => decodeQueryText(text)).toThrow(
        expect.objectContaining({ status: 400, code: 'INVALID_QUERY' }),
      );
    }
    expect(decodeQueryText('tax_xyz eq 1')).toBe('tax_xyz eq 1');
  });

  test('queryName quotes only what the query language cannot read bare', () => {
    expect(queryName('id')).toBe('id');
    expect(queryName('zip code')).toBe('"zip code"');
    expect(queryName('a"b')).toBe('"a""b"');
  });
});
