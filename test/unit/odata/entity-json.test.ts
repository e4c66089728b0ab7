/** leadingEntities: a page read one entity past its end, shown without that entity. */
import { describe, expect, test } from '@jest/globals';
import { leadingEntities } from '../../../src/odata/entity-json.js';

describe('leadingEntities', () => {
  const rows = [
    { id: 1, note: 'a, "b"], {c}', tags: [1, 2] },
    { id: 2, note: '\\', lines: [{ n: 1 }, { n: 2 }] },
    { id: 3, note: null },
  ];
  const text = JSON.stringify(rows);

  test.each([1, 2, 3])('the first %i of three, strings, escapes and nested arrays kept', (n) => {
    expect(JSON.parse(leadingEntities(text, n))).toEqual(rows.slice(0, n));
  });

  test('fewer entities than asked: the array as it is', () => {
    expect(leadingEntities(text, 4)).toBe(text);
    expect(leadingEntities('[]', 1)).toBe('[]');
  });
});
