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
    for (let i = 0; i < 25_000; i++) expect(quoteIdent(`c${i}\``)).toBe(`\`c${i}\`\`\``);
    expect(quoteIdent('c7`')).toBe('`c7```');
  });
});
