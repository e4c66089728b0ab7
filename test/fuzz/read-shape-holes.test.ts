/**
 * The shape cache's holes on random text (pipeline/read-shape.ts): each digit run taken as a hole
 * is lexed as one number token with its text, and the compiler binds every hole as
 * Number(text). The examples are in test/unit/pipeline/read-shape.test.ts; FUZZ_SEED replays a
 * run.
 */
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compileValue } from '../../src/sql/compile-read.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';
import { expectLexedAsNumbers } from '../unit/fixtures/read-shape.js';

const seed = fuzzSeed();

describe('holesOf on random text', () => {
  test('on random text, each hole is lexed as one number token with its text', () => {
    const piece = fc.constantFrom(
      ...['0', '1', '5', '9', '00', '12', '007', '123456789012345', '1234567890123456'],
      ...[' ', '\t', '\n', '\r', '(', ')', ',', "'", "''", '-', '.', 'e', 'E', '+', ':'],
      ...['T', 'Z', 'a', 'x', 'eq', 'in', 'é', '١', '😀', '\u000b', '\u00a0'],
      ...['2024-01-01', '12:30:00', '2024-01-03T10:00', '02:00', '10:00'],
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        expectLexedAsNumbers(pieces.join(''));
      }),
      { numRuns: 20_000, seed },
    );
  });

  test('compileNumber binds every hole as Number(text), a `?`', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9]{1,15}$/), (digits) => {
        const params: unknown[] = [];
        expect(compileValue({ kind: 'number', text: digits }, params)).toBe('?');
        expect(params).toEqual([Number(digits)]);
        expect(Object.is(params[0], -0)).toBe(false);
      }),
      { numRuns: 5000, seed },
    );
  });
});
