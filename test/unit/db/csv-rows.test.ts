import { describe, expect, test } from '@jest/globals';
import { csvHeader, csvSerializer } from '../../../src/types/csv-rows.js';
import { csvField } from '../../../src/types/csv-text.js';
import type { Field } from '../../../src/types/rows.js';
import { column, text } from '../fixtures/schema.js';

const value = (name: string, info = text(name)): Field => ({ kind: 'value', name, column: info });

describe('csvField', () => {
  test.each([
    ['plain', 'plain'],
    ['', '""'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r', '"cr\r"'],
    ['  spaced  ', '  spaced  '],
    ['Zürich 東京 😀', 'Zürich 東京 😀'],
  ])('%j → %j', (input, output) => {
    expect(csvField(input)).toBe(output);
  });
});

describe('csvSerializer', () => {
  const fields: Field[] = [
    value('id', column('id')),
    value('big', column('big', { dataType: 'bigint' })),
    value('amount', column('amount', { kind: 'decimal', dataType: 'decimal' })),
    value('ratio', column('ratio', { kind: 'float', dataType: 'float' })),
    value('flags', column('flags', { kind: 'bit', dataType: 'bit' })),
    value('doc', column('doc', { kind: 'json', dataType: 'json' })),
    value('data', column('data', { kind: 'binary', dataType: 'varbinary' })),
    value('name'),
  ];

  test('the JSON answer’s values as text, NULL empty and an empty value ""', () => {
    const write = csvSerializer(fields);
    expect(
      write([
        7,
        '9007199254740993',
        '-0.0100',
        1.100000023841858,
        Buffer.from([1, 0]),
        '{"a": "x,y"}',
        Buffer.from([0, 255]),
        'O"Brien, Jo',
      ]),
    ).toBe('7,9007199254740993,-0.0100,1.1,256,"{""a"": ""x,y""}",AP8=,"O""Brien, Jo"');
    expect(write([null, null, null, null, null, null, Buffer.alloc(0), ''])).toBe(',,,,,,"",""');
  });

  test("a spatial column's cell is the GeoJSON of the JSON answer, quoted for its commas", () => {
    const point = Buffer.alloc(21);
    point.writeUInt8(1, 0);
    point.writeUInt32LE(1, 1);
    point.writeDoubleLE(1.5, 5);
    point.writeDoubleLE(-2, 13);
    const write = csvSerializer([
      value('at', column('at', { kind: 'geometry', dataType: 'point' })),
      value('n', column('n')),
    ]);
    expect(write([point, 1])).toBe('"{""type"":""Point"",""coordinates"":[1.5,-2]}",1');
    expect(write([null, 2])).toBe(',2');
  });

  test('an expanded relation holds its JSON; the header names every field', () => {
    const shaped: Field[] = [
      value('id', column('id')),
      { kind: 'object', name: 'owner', fields: [value('email')] },
      { kind: 'array', name: 'pets', fields: [value('name')] },
      value('after'),
    ];
    const write = csvSerializer(shaped);
    expect(write([1, 5, 'a@b.c', '2:["Rex, dog"],["Tom"]', 'x'])).toBe(
      '1,"{""email"":""a@b.c""}","[{""name"":""Rex, dog""},{""name"":""Tom""}]",x',
    );
    expect(write([2, null, null, '0:', 'y'])).toBe('2,null,[],y');
    expect(csvHeader([...shaped, value('a,b')])).toBe('id,owner,pets,after,"a,b"');
  });
});

describe('formulas (CSV injection)', () => {
  const fields: Field[] = [
    value('name'),
    value('n', column('n')),
    value('amount', column('amount', { kind: 'decimal', dataType: 'decimal' })),
    value('doc', column('doc', { kind: 'json', dataType: 'json' })),
    value('at', column('at', { kind: 'string', dataType: 'time' })),
    value('kind', column('kind', { kind: 'string', dataType: 'enum' })),
  ];

  test.each([
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\r=1', `"'\r=1"`],
    ['=HYPERLINK("http://x","y")', `"'=HYPERLINK(""http://x"",""y"")"`],
    ['a=1', 'a=1'],
    [' =1', ' =1'],
    ["'=1", "'=1"],
    ['', '""'],
  ])('text %j → %j', (input, output) => {
    expect(csvSerializer([value('name')])([input])).toBe(output);
    const enumColumn = column('kind', { kind: 'string', dataType: 'enum' });
    expect(csvSerializer([value('kind', enumColumn)])([input])).toBe(output);
  });

  test('numbers, a JSON number and a negative TIME are no formulas; other JSON text is', () => {
    const write = csvSerializer(fields);
    expect(write(['x', -5, '-2.50', '-5', '-01:00:00', 'a'])).toBe('x,-5,-2.50,-5,-01:00:00,a');
    expect(write([null, null, null, '-1e3', null, null])).toBe(',,,-1e3,,');
    expect(write([null, null, null, '\t"=x"', null, null])).toBe(`,,,"'\t""=x""",,`);
    expect(write([null, null, null, '-1+A1', null, '-'])).toBe(",,,'-1+A1,,'-");
  });

  test('keep writes every cell as it is', () => {
    const write = csvSerializer(fields, 'keep');
    expect(write(['=1+1', -5, '-2.50', '-1+A1', '-01:00:00', '@x'])).toBe(
      '=1+1,-5,-2.50,-1+A1,-01:00:00,@x',
    );
  });
});

describe('fractional seconds', () => {
  test('DATETIME(n), TIMESTAMP(n) and TIME(n) carry exactly n digits, as in JSON', () => {
    const write = csvSerializer([
      value(
        'at',
        column('at', { kind: 'datetime', dataType: 'datetime', columnType: 'datetime(3)' }),
      ),
      value(
        'ts',
        column('ts', { kind: 'datetime', dataType: 'timestamp', columnType: 'timestamp(6)' }),
      ),
      value('tm', text('tm', { dataType: 'time', columnType: 'time(2)' })),
      value('d0', column('d0', { kind: 'datetime', dataType: 'datetime', columnType: 'datetime' })),
    ]);
    // As the binary protocol gives them: a zero fraction left out, a TIME's trailing zeros too.
    expect(
      write([
        '2024-05-01 09:00:00',
        '2024-05-01 09:00:00.5',
        '-100:00:00.5',
        '2024-05-01 09:00:00',
      ]),
    ).toBe('2024-05-01 09:00:00.000,2024-05-01 09:00:00.500000,-100:00:00.50,2024-05-01 09:00:00');
    // As the text protocol gives them: already right.
    expect(
      write(['2024-05-01 09:00:00.250', '2024-05-01 09:00:00.000001', '10:00:00.00', null]),
    ).toBe('2024-05-01 09:00:00.250,2024-05-01 09:00:00.000001,10:00:00.00,');
  });
});
