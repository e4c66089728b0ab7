import { describe, expect, test } from '@jest/globals';
import type { FieldPacket } from 'mysql2';
import { columnFromField } from '../../../src/db/result-columns.js';
import { rowSerializer } from '../../../src/types/rows.js';

/** A field as mysql2 describes one: wire type, character set, flags, decimals. */
function field(
  name: string,
  columnType: number,
  more: { characterSet?: number; flags?: number; decimals?: number; columnLength?: number } = {},
  extendedFormat?: string,
): FieldPacket {
  return {
    name,
    columnType,
    type: columnType,
    characterSet: 63,
    flags: 0,
    decimals: 0,
    columnLength: 11,
    ...more,
    ...(extendedFormat === undefined ? {} : { extendedFormat }),
  } as unknown as FieldPacket;
}

const UTF8MB4 = 45;

describe('columnFromField: the kind of a result column, as schema.ts gives a table column', () => {
  test.each([
    ['TINY', field('a', 1), 'integer', 'tinyint'],
    ['LONGLONG unsigned', field('a', 8, { flags: 32 }), 'integer', 'bigint unsigned'],
    ['NEWDECIMAL', field('a', 246, { decimals: 2, columnLength: 12 }), 'decimal', 'decimal(12,2)'],
    ['FLOAT', field('a', 4, { decimals: 31 }), 'float', 'float'],
    ['DOUBLE', field('a', 5, { decimals: 31 }), 'float', 'double'],
    ['YEAR', field('a', 13), 'year', 'year'],
    ['BIT', field('a', 16, { flags: 32, columnLength: 10 }), 'bit', 'bit unsigned'],
    ['DATE', field('a', 10), 'date', 'date'],
    ['DATETIME(3)', field('a', 12, { decimals: 3 }), 'datetime', 'datetime(3)'],
    ['TIMESTAMP', field('a', 7), 'datetime', 'timestamp'],
    ['TIME(2)', field('a', 11, { decimals: 2 }), 'string', 'time(2)'],
    ['VARCHAR text', field('a', 253, { characterSet: UTF8MB4, decimals: 39 }), 'string', 'varchar'],
    ['VARCHAR binary', field('a', 253), 'binary', 'varbinary'],
    ['STRING binary', field('a', 254), 'binary', 'binary'],
    ['BLOB binary', field('a', 252), 'binary', 'blob'],
    ['BLOB text', field('a', 252, { characterSet: UTF8MB4 }), 'string', 'blob'],
    ['JSON (MySQL)', field('a', 245, { characterSet: UTF8MB4 }), 'json', 'json'],
    [
      'LONGTEXT of format json (MariaDB)',
      field('a', 252, { characterSet: UTF8MB4 }, 'json'),
      'json',
      'blob',
    ],
    ['NULL', field('a', 6), 'string', 'null'],
    ['an unknown wire type', field('a', 242), 'string', 'varchar'],
  ])('%s → %s', (_label, given, kind, columnType) => {
    const column = columnFromField(given);
    expect([column.kind, column.columnType]).toEqual([kind, columnType]);
  });

  test('nullable unless NOT NULL; named as the result names it', () => {
    expect(columnFromField(field('x y', 3, { flags: 1 }))).toMatchObject({
      name: 'x y',
      nullable: false,
    });
    expect(columnFromField(field('x', 3)).nullable).toBe(true);
  });

  test("MariaDB's BIT expression (digits, marked binary) is an integer; a BIT column is bytes", () => {
    const expression = field('e', 16, { flags: 160, columnLength: 10 });
    const bitColumn = field('c', 16, { flags: 32, columnLength: 10 });
    const serialize = rowSerializer([
      columnFromField(expression, 'mariadb'),
      columnFromField(bitColumn, 'mariadb'),
    ]);
    expect(serialize([Buffer.from('641'), Buffer.from([0x02, 0x81])])).toBe('{"e":641,"c":641}');
    // MySQL sends bytes for every BIT field.
    expect(columnFromField(expression, 'mysql').kind).toBe('bit');
  });

  test('rows are written by the row codec: DECIMAL digits, exact fractions, base64, JSON', () => {
    const serialize = rowSerializer(
      [
        field('d', 246, { decimals: 2 }),
        field('f', 4, { decimals: 31 }),
        field('b', 253),
        field('j', 252, { characterSet: UTF8MB4 }, 'json'),
        field('big', 8),
      ].map((f) => columnFromField(f)),
    );
    expect(
      serialize([
        '-1.50',
        1.100000023841858,
        Buffer.from([0, 255]),
        '{"a": [1]}',
        '9007199254740993',
      ]),
    ).toBe('{"d":-1.50,"f":1.1,"b":"AP8=","j":{"a": [1]},"big":"9007199254740993"}');
  });
});
