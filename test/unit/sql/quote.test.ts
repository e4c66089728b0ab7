import { describe, expect, test } from '@jest/globals';
import { quoteIdent } from '../../../src/sql/quote.js';

describe('quoteIdent', () => {
  test('backtick-quotes a name and doubles every backtick inside it, every time', () => {
    for (let round = 0; round < 3; round++) {
      expect(quoteIdent('items')).toBe('`items`');
      expect(quoteIdent('a`b')).toBe('`a``b`');
      expect(quoteIdent('``')).toBe('``````');
      expect(quoteIdent('x`; DROP TABLE t; --')).toBe('`x``; DROP TABLE t; --`');
      expect(quoteIdent('')).toBe('``');
    }
  });

  test('stays exact past the bound of kept names', () => {
    const names = Array.from({ length: 25_000 }, (_, i) => `c${i}\``);
    // One comparison of every answer: 25,000 expect() calls took seconds of the unit tier.
    expect(names.map(quoteIdent)).toEqual(names.map((name) => `\`${name}\`\``));
    expect(quoteIdent('c7`')).toBe('`c7```');
  });
});
