/**
 * The binary-protocol date reader (db/binary-dates.ts) against mysql2's own, on random packets:
 * the same text and the same bytes read for any value a packet can hold. The examples and the
 * swap are in test/unit/db/binary-dates.test.ts; FUZZ_SEED replays a run.
 */
import { expect, test } from '@jest/globals';
import fc from 'fast-check';
import {
  type BinaryPacket,
  COLUMN_TYPE,
  dateBytes,
  mysqlReadDateTimeString as mysqlOwn,
  readDateTimeString,
  readSample,
} from '../../src/db/binary-dates.js';
import { fuzzSeed } from '../helpers/fuzz-seed.js';

const { DATE, DATETIME, TIMESTAMP } = COLUMN_TYPE;
const mysqlReadDateTimeString = mysqlOwn as BinaryPacket['readDateTimeString'];

test('the same text as mysql2 and the same bytes read, for any value a packet can hold', () => {
  const byte = fc.integer({ min: 0, max: 255 });
  const parts = fc.oneof(
    fc.constant([]),
    fc.tuple(fc.integer({ min: 0, max: 65_535 }), byte, byte),
    fc.tuple(fc.integer({ min: 0, max: 65_535 }), byte, byte, byte, byte, byte),
    fc.tuple(
      fc.integer({ min: 0, max: 65_535 }),
      byte,
      byte,
      byte,
      byte,
      byte,
      fc.integer({ min: 0, max: 0xffff_ffff }),
    ),
  );
  fc.assert(
    fc.property(
      parts,
      fc.integer({ min: 0, max: 6 }),
      fc.constantFrom(null, ' ', 'T'),
      fc.constantFrom<number | null>(DATE, DATETIME, TIMESTAMP, null),
      (value, decimals, timeSep, columnType) => {
        const bytes = dateBytes(value);
        expect(readSample(readDateTimeString, bytes, decimals, timeSep, columnType)).toEqual(
          readSample(mysqlReadDateTimeString, bytes, decimals, timeSep, columnType),
        );
      },
    ),
    { numRuns: 20_000, seed: fuzzSeed() },
  );
});
