/**
 * The filter parser on any input (query/filter-parser.ts): random text, and random runs of its
 * own words, give an AST or a 400 ApiError, never anything else. Its examples are in
 * test/unit/query/filter-parser.test.ts; FUZZ_SEED replays a run.
 */
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { ApiError } from '../../src/errors.js';
import { parseFilter } from '../../src/query/filter-parser.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';

describe('parseFilter: any input', () => {
  test('yields an AST or an ApiError, never anything else', () => {
    const alphabet = fc.constantFrom(
      ...`abz09 _$'(),-.eE+ü日🎉#;\`"\\`.split(''),
      'eq ',
      'and ',
      'or ',
      'not ',
      'in ',
      'null ',
      'contains',
      "''",
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc.array(alphabet, { maxLength: 60 }).map((a) => a.join('')),
        ),
        (text) => {
          try {
            parseFilter(text);
          } catch (error) {
            expect(error).toBeInstanceOf(ApiError);
            expect((error as ApiError).status).toBe(400);
          }
        },
      ),
      { numRuns: 3000, seed: fuzzSeed() },
    );
  });
});
