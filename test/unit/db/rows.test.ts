import type { ColumnInfo, JsonKind } from '../../../src/db/schema-types.js';
import { ApiError } from '../../../src/errors.js';
import {
  quoteString,
  withFraction,
  writeBit,
  writeFloat32,
  writeInteger,
} from '../../../src/types/json-text.js';
import { type Field, rowSerializer, shapeSerializer } from '../../../src/types/rows.js';

function column(name: string, kind: JsonKind, dataType = 'x'): ColumnInfo {
  return {
    name,
    dataType,
    columnType: dataType,
    kind,
    nullable: true,
    unsigned: false,
    autoIncrement: false,
    hasDefault: true,
    generated: false,
    maxLength: null,
    numericPrecision: null,
    numericScale: null,
  };
}

describe('value writers (docs/types.md)', () => {
  test.each([
    [42, '42'],
    ['-7', '-7'],
    ['9007199254740991', '9007199254740991'],
    ['9007199254740992', '"9007199254740992"'],
    ['-9007199254740991', '-9007199254740991'],
    ['-9007199254740992', '"-9007199254740992"'],
    ['18446744073709551615', '"18446744073709551615"'],
    ['123456789012345', '123456789012345'],
  ])('integer %p → %s', (value, json) => {
    expect(writeInteger(value)).toBe(json);
  });

  test.each([
    [Math.fround(1.1), '1.1'],
    [Math.fround(0.1), '0.1'],
    [Math.fround(3.4028234663852886e38), '3.4028235e+38'],
    [16777216, '16777216'],
    [Math.fround(-2.5), '-2.5'],
    [Number.NaN, 'null'],
  ])('FLOAT %p → %s (shortest text of the same float)', (value, json) => {
    expect(writeFloat32(value)).toBe(json);
    if (json !== 'null') expect(Math.fround(Number(json))).toBe(value);
  });

  test.each([
    [Buffer.from([0b10101]), '21'],
    [Buffer.from([1, 0]), '256'],
    [Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), '"18446744073709551615"'],
  ])('BIT %p → %s', (value, json) => {
    expect(writeBit(value)).toBe(json);
  });
});

describe('fractional seconds exactly as stored', () => {
  test.each([
    // The binary protocol leaves out a zero fraction and a TIME's trailing zeros.
    ['2024-01-01 09:00:00', 3, '2024-01-01 09:00:00.000'],
    ['2024-01-01 09:00:00.5', 3, '2024-01-01 09:00:00.500'],
    ['2024-01-01 09:00:00.123456', 6, '2024-01-01 09:00:00.123456'],
    ['2024-01-01 09:00:00.120', 3, '2024-01-01 09:00:00.120'],
    ['10:00:00.5', 3, '10:00:00.500'],
    ['-838:59:59', 6, '-838:59:59.000000'],
    ['10:00:00', 1, '10:00:00.0'],
    ['10:00:00.500000', 3, '10:00:00.500'],
  ])('%s with %d digits → %s', (text, digits, expected) => {
    expect(withFraction(text, digits)).toBe(expected);
  });

  test('each precision of DATETIME, TIMESTAMP and TIME writes its own digits', () => {
    for (let n = 0; n <= 6; n++) {
      const suffix = n === 0 ? '' : `(${n})`;
      const columns = [
        { ...column('d', 'datetime', 'datetime'), columnType: `datetime${suffix}` },
        { ...column('s', 'datetime', 'timestamp'), columnType: `timestamp${suffix}` },
        { ...column('t', 'string', 'time'), columnType: `time${suffix}` },
      ];
      const fraction = n === 0 ? '' : `.${'0'.repeat(n)}`;
      expect(
        rowSerializer(columns)(['2024-01-01 09:00:00', '2024-01-01 09:00:00', '10:00:00']),
      ).toBe(
        `{"d":"2024-01-01 09:00:00${fraction}","s":"2024-01-01 09:00:00${fraction}","t":"10:00:00${fraction}"}`,
      );
    }
  });
});

describe('rowSerializer', () => {
  const columns = [
    column('id', 'integer', 'bigint'),
    column('price', 'decimal', 'decimal'),
    column('at', 'datetime', 'datetime'),
    column('day', 'date', 'date'),
    column('name', 'string', 'varchar'),
    column('doc', 'json', 'json'),
    column('bytes', 'binary', 'varbinary'),
    column('ratio', 'float', 'double'),
    column('y', 'year', 'year'),
    column('flags', 'bit', 'bit'),
    column('weird "key"', 'string', 'text'),
  ];
  const serialize = rowSerializer(columns);

  test('writes keys in select order and every type as docs/types.md says', () => {
    const text = serialize([
      '12345678901234567890',
      '-0.10',
      '2024-02-29 23:59:59.000001',
      '2024-02-29',
      'Ünïcödé "quoted" \\ \n',
      '{"a": [1, 2.50, null]}',
      Buffer.from([0, 255, 16]),
      0.30000000000000004,
      2024,
      Buffer.from([5]),
      'x',
    ]);
    expect(text).toBe(
      '{"id":"12345678901234567890","price":-0.10,"at":"2024-02-29 23:59:59.000001","day":"2024-02-29",' +
        '"name":"Ünïcödé \\"quoted\\" \\\\ \\n","doc":{"a": [1, 2.50, null]},"bytes":"AP8Q",' +
        '"ratio":0.30000000000000004,"y":2024,"flags":5,"weird \\"key\\"":"x"}',
    );
    expect(Object.keys(JSON.parse(text))).toEqual(columns.map((c) => c.name));
    expect(JSON.parse(text).price).toBe(-0.1);
  });

  test('NULL is null for every kind', () => {
    const parsed = JSON.parse(serialize(columns.map(() => null)));
    expect(Object.values(parsed)).toEqual(columns.map(() => null));
  });

  test('an empty select list is an empty object', () => {
    expect(rowSerializer([])([])).toBe('{}');
  });
});

describe('shapeSerializer: expanded relations (sql/compile-read.ts writes their slots)', () => {
  const id = column('id', 'integer', 'int');
  const name = column('name', 'string', 'varchar');
  const fields: Field[] = [
    { kind: 'value', name: 'id', column: id },
    { kind: 'object', name: 'customer', fields: [{ kind: 'value', name: 'name', column: name }] },
    {
      kind: 'array',
      name: 'items',
      fields: [
        { kind: 'value', name: 'id', column: id },
        {
          kind: 'object',
          name: 'product',
          fields: [{ kind: 'value', name: 'name', column: name }],
        },
      ],
    },
  ];
  const serialize = shapeSerializer(fields);

  test('an object after its marker slot, null when the marker is; an array from `<n>:` text', () => {
    // As MariaDB's JSON_ARRAY writes them: `, ` between values, integers as numbers.
    expect(serialize([1, 7, 'Ann', '2:[10, "3", "Tea"],[11, null, null]'])).toBe(
      '{"id":1,"customer":{"name":"Ann"},"items":[{"id":10,"product":{"name":"Tea"}},{"id":11,"product":null}]}',
    );
    expect(serialize([2, null, null, '0:'])).toBe('{"id":2,"customer":null,"items":[]}');
  });

  function refusal(row: unknown[]): ApiError {
    try {
      serialize(row);
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
    throw new Error('no error');
  }

  test.each<[string, unknown]>([
    // A CONCAT longer than max_allowed_packet is NULL: once answered as an empty array.
    ['NULL (MySQL gave up on the value)', null],
    ['fewer rows than it says (cut short)', '3:[10, null, null],[11, null, null]'],
    ['text cut inside a row', '2:[10, null, null],[1'],
    ['text cut inside a string', '2:[10, "ab\\"c", "x'],
    ['text cut after a row', '2:[10, null, null],'],
    ['a row with a slot too many', '1:[10, null, null, 4]'],
    ['a row with a slot too few', '1:[10, null]'],
    ['no count', '[10, null, null]'],
  ])('a related array that is %s is RELATED_ROWS_TOO_LARGE', (_, value) => {
    const error = refusal([1, null, null, value]);
    expect([error.status, error.code, error.message]).toEqual([
      400,
      'RELATED_ROWS_TOO_LARGE',
      "The related rows of 'items' for one row are more than MySQL sends in one value (max_allowed_packet); read them in pages with items($top=…)",
    ]);
  });
});

describe('quoteString', () => {
  // Its shortcut must give exactly JSON.stringify's text, also where escaping starts and stops.
  const samples = [
    '',
    'item-000042',
    'plain text with spaces',
    'quote " inside',
    'back\\slash',
    'tab\tnew\nline\r',
    '\u0000\u001f\u007f',
    'line\u2028para\u2029sep',
    'emoji 😀 paired',
    'lone high \ud800 surrogate',
    'lone low \udfff surrogate',
    'é ü ß 中文',
    '</script>',
  ];
  test.each(samples)('%j', (text) => {
    expect(quoteString(text)).toBe(JSON.stringify(text));
  });

  test('every single UTF-16 code unit', () => {
    const wrong: number[] = [];
    for (let unit = 0; unit <= 0xffff; unit++) {
      const text = `a${String.fromCharCode(unit)}b`;
      if (quoteString(text) !== JSON.stringify(text)) wrong.push(unit);
    }
    expect(wrong).toEqual([]);
  });
});

describe('shapeSerializer: values as MySQL writes them inside a related array', () => {
  const typed = (name: string, kind: JsonKind, dataType: string, columnType = dataType) => ({
    ...column(name, kind, dataType),
    columnType,
  });
  const columns = [
    typed('i', 'integer', 'int'),
    typed('big', 'integer', 'bigint'),
    typed('d', 'decimal', 'decimal'),
    typed('f', 'float', 'float'),
    typed('db', 'float', 'double'),
    typed('y', 'year', 'year'),
    typed('b', 'bit', 'bit'),
    typed('bin', 'binary', 'blob'),
    typed('j', 'json', 'longtext'),
    typed('dt', 'datetime', 'datetime', 'datetime(3)'),
    typed('t', 'string', 'time', 'time(3)'),
    typed('s', 'string', 'varchar'),
  ];
  const serialize = shapeSerializer([
    {
      kind: 'array',
      name: 'a',
      fields: columns.map((c) => ({ kind: 'value', name: c.name, column: c })),
    },
  ]);
  const driver = rowSerializer(columns);
  const one = (tokens: string) => serialize([`1:[${tokens}]`]).slice('{"a":['.length, -2);

  test('each type: the text the same value read from the driver gives', () => {
    expect(
      one(
        '-7, "18446744073709551615", "-0.50", "1.100000023841858", "0.30000000000000004", 2024, ' +
          '"5", "AP8Q\\nAA==", "{\\"a\\": [1, 2.50]}", "2024-01-02 03:04:05.000", "-838:59:59.000", "x"',
      ),
    ).toBe(
      driver([
        -7,
        '18446744073709551615',
        '-0.50',
        Math.fround(1.1),
        0.30000000000000004,
        2024,
        Buffer.from([5]),
        Buffer.from([0, 255, 16, 0]),
        '{"a": [1, 2.50]}',
        '2024-01-02 03:04:05.000',
        '-838:59:59.000',
        'x',
      ]),
    );
  });

  test.each([
    // MariaDB escapes quotes, backslashes and control characters (\u001F in capitals) and
    // leaves DEL, U+2028 and the rest as they are: the answer is JSON.stringify's either way.
    ['"plain text é 😀"', 'plain text é 😀'],
    ['"say \\"hi\\" \\\\ there"', 'say "hi" \\ there'],
    ['"tab\\tline\\nnul\\u0000us\\u001F"', 'tab\tline\nnul\u0000us\u001f'],
    ['"del\u007f sep\u2028 /"', 'del\u007f sep\u2028 /'],
  ])('the string %s is written as JSON.stringify writes its text', (token, text) => {
    const nulls = 'null, '.repeat(columns.length - 1);
    expect(one(`${nulls}${token}`)).toBe(driver([...columns.slice(0, -1).map(() => null), text]));
  });
});
