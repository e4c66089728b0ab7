import {
  quoteString,
  rowSerializer,
  withFraction,
  writeBit,
  writeFloat32,
  writeInteger,
} from '../../../src/db/rows.js';
import type { ColumnInfo, JsonKind } from '../../../src/db/schema-types.js';

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

describe('value writers (CONTRACT §2)', () => {
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

  test('writes keys in select order and every type as the contract says', () => {
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
