import {
  agreesWith,
  type BinaryPacket,
  COLUMN_TYPE,
  dateBytes,
  mysqlReadDateTimeString as mysqlOwn,
  Packet,
  readDateTimeString,
  readSample,
  useFasterBinaryDates,
} from '../../../src/db/binary-dates.js';

const { DATE, DATETIME, TIMESTAMP } = COLUMN_TYPE;
// Found in the installed mysql2 (the last test fails otherwise).
const mysqlReadDateTimeString = mysqlOwn as BinaryPacket['readDateTimeString'];

test.each<[string, number[], number, string | null, number, string]>([
  ['a date', [2024, 1, 5], 0, null, DATE, '2024-01-05'],
  ['a datetime', [2024, 10, 9, 8, 7, 59], 0, null, DATETIME, '2024-10-09 08:07:59'],
  ['a datetime with T', [2024, 10, 9, 8, 7, 59], 0, 'T', DATETIME, '2024-10-09T08:07:59'],
  ['midnight (no time bytes)', [2024, 10, 9], 0, null, DATETIME, '2024-10-09 00:00:00'],
  ['midnight of a TIMESTAMP', [2024, 10, 9], 0, null, TIMESTAMP, '2024-10-09 00:00:00'],
  ['a zero date', [], 0, null, DATE, '0000-00-00'],
  ['a zero datetime', [], 0, null, DATETIME, '0000-00-00 00:00:00'],
  ['a year before 1000', [999, 2, 3], 0, null, DATE, '0999-02-03'],
  ['year 5', [5, 2, 3], 0, null, DATE, '0005-02-03'],
  ['milliseconds', [2024, 1, 1, 0, 0, 0, 120_000], 3, null, DATETIME, '2024-01-01 00:00:00.120'],
  ['one microsecond', [2024, 1, 1, 0, 0, 0, 1], 6, null, DATETIME, '2024-01-01 00:00:00.000001'],
  // mysql2 writes the bare number when it is not told the column's digits.
  [
    'no decimals given',
    [2024, 1, 1, 0, 0, 0, 120_000],
    0,
    null,
    DATETIME,
    '2024-01-01 00:00:00.120000',
  ],
])('%s', (_, parts, decimals, timeSep, columnType, text) => {
  const bytes = dateBytes(parts);
  expect(readSample(readDateTimeString, bytes, decimals, timeSep, columnType)).toEqual({
    text,
    offset: 4 + bytes.length,
  });
  expect(readSample(mysqlReadDateTimeString, bytes, decimals, timeSep, columnType).text).toBe(text);
});

test('a reader that writes other text is not taken for mysql2’s', () => {
  const unpaddedYear: BinaryPacket['readDateTimeString'] = function (this: BinaryPacket, ...args) {
    return mysqlReadDateTimeString.apply(this, args).replace(/^0+/, '');
  };
  const isoSeparator: BinaryPacket['readDateTimeString'] = function (
    this: BinaryPacket,
    decimals,
    _timeSep,
    columnType,
  ) {
    return mysqlReadDateTimeString.call(this, decimals, 'T', columnType);
  };
  expect(agreesWith(mysqlReadDateTimeString)).toBe(true);
  expect(agreesWith(unpaddedYear)).toBe(false);
  expect(agreesWith(isoSeparator)).toBe(false);
});

test('it takes mysql2’s place once, and again changes nothing', () => {
  expect(useFasterBinaryDates()).toBe(true);
  expect(Packet?.prototype.readDateTimeString).toBe(readDateTimeString);
  expect(useFasterBinaryDates()).toBe(true);
  expect(Packet?.prototype.readDateTimeString).toBe(readDateTimeString);
});
