import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import {
  isKeyRead,
  parseKeyRead,
  parseKeyValue,
  parseWriteAction,
  type WriteAction,
} from '../../../src/query/key-value.js';

function failure(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('parseWriteAction', () => {
  test.each<[string, WriteAction]>([
    ['create', { kind: 'create' }],
    // Alone, their rows are a $filter's (query/write-query.ts).
    ['update', { kind: 'update', match: null }],
    ['delete', { kind: 'delete', match: null }],
    [
      'update(id,5)',
      { kind: 'update', match: { key: 'id', value: { kind: 'number', text: '5' }, bare: '5' } },
    ],
    [
      'delete(id,5)',
      { kind: 'delete', match: { key: 'id', value: { kind: 'number', text: '5' }, bare: '5' } },
    ],
    [
      "update(name,'O''Brien, Jo')",
      {
        kind: 'update',
        match: { key: 'name', value: { kind: 'string', value: "O'Brien, Jo" }, bare: null },
      },
    ],
    // The value may hold parentheses: only the segment's last character closes the call.
    [
      "delete(name,'a) or (b')",
      {
        kind: 'delete',
        match: { key: 'name', value: { kind: 'string', value: 'a) or (b' }, bare: null },
      },
    ],
  ])('%j', (segment, expected) => {
    expect(parseWriteAction(segment)).toEqual(expected);
  });

  test.each([
    'read',
    'Create',
    'creates',
    'create()',
    'UPDATE(id,5)',
    'updates(id,5)',
    'upsert(id,5)',
    'update ',
    '',
    '(id,5)',
    'drop(id,5)',
  ])('%j is no action (404)', (segment) => {
    expect(parseWriteAction(segment)).toBeNull();
  });

  test.each<[string, string]>([
    ['update(id,5', "Write update(<key>,<value>): 'update(id,5' has no closing parenthesis"],
    ['update(id,5) ', "Write update(<key>,<value>): 'update(id,5) ' has no closing parenthesis"],
    ['update()', 'Write update(<key>,<value>): the key column is empty'],
    ['update(,5)', 'Write update(<key>,<value>): the key column is empty'],
    ['update( ,5)', 'Write update(<key>,<value>): the key column is empty'],
    ['delete(id)', 'Write delete(<key>,<value>): a comma and a value must follow the key'],
    ['update(id,)', "The key value is empty; write '' for an empty string"],
    ['update(id, )', "The key value is empty; write '' for an empty string"],
    [
      "update(name,'abc)",
      "Invalid key value 'abc: the string has no closing quote (write '' for a quote inside it)",
    ],
    [
      "update(name,'O'Brien')",
      "Invalid key value 'O'Brien': unexpected text after the closing quote at position 4 (write '' for a quote inside a string)",
    ],
    ['update(`id,5)', 'Write update(<key>,<value>): the key has no closing backtick'],
    [
      'update(`id` x,5)',
      'Write update(<key>,<value>): unexpected text after the quoted key at position 6',
    ],
  ])('%j fails with 400', (segment, message) => {
    const error = failure(() => parseWriteAction(segment));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: 'INVALID_QUERY', message });
  });
});

describe('parseKeyValue', () => {
  test.each<[string, ReturnType<typeof parseKeyValue>]>([
    ['id,5', { key: 'id', value: { kind: 'number', text: '5' }, bare: '5' }],
    [' id , 5 ', { key: 'id', value: { kind: 'number', text: '5' }, bare: '5' }],
    ['id,-3.5', { key: 'id', value: { kind: 'number', text: '-3.5' }, bare: '-3.5' }],
    ['code,007', { key: 'code', value: { kind: 'number', text: '007' }, bare: '007' }],
    ['id,null', { key: 'id', value: { kind: 'null' }, bare: 'null' }],
    ['flag,TRUE', { key: 'flag', value: { kind: 'boolean', value: true }, bare: 'TRUE' }],
    ["name,'null'", { key: 'name', value: { kind: 'string', value: 'null' }, bare: null }],
    ["name,''", { key: 'name', value: { kind: 'string', value: '' }, bare: null }],
    ["name,''''", { key: 'name', value: { kind: 'string', value: "'" }, bare: null }],
    // The split is at the first comma: the rest, commas and all, is the value.
    ['name,a,b', { key: 'name', value: { kind: 'string', value: 'a,b' }, bare: 'a,b' }],
    ["name,'a,b'", { key: 'name', value: { kind: 'string', value: 'a,b' }, bare: null }],
    ["name,O'Brien", { key: 'name', value: { kind: 'string', value: "O'Brien" }, bare: "O'Brien" }],
    ['name,100%', { key: 'name', value: { kind: 'string', value: '100%' }, bare: '100%' }],
    [
      'name,日本 ü 🎉',
      { key: 'name', value: { kind: 'string', value: '日本 ü 🎉' }, bare: '日本 ü 🎉' },
    ],
    ["name,' padded '", { key: 'name', value: { kind: 'string', value: ' padded ' }, bare: null }],
    // Unquoted keys keep inner spaces and any character but a comma.
    ['first name,x', { key: 'first name', value: { kind: 'string', value: 'x' }, bare: 'x' }],
    ["it's,x", { key: "it's", value: { kind: 'string', value: 'x' }, bare: 'x' }],
    ['größe,5', { key: 'größe', value: { kind: 'number', text: '5' }, bare: '5' }],
    ['select,5', { key: 'select', value: { kind: 'number', text: '5' }, bare: '5' }],
    // An unquoted key is split on UTF-16 units: characters beyond the BMP and lone surrogates
    // come through whole, as they did when it was split on code points.
    ['🎉 ,5', { key: '🎉', value: { kind: 'number', text: '5' }, bare: '5' }],
    [
      'a\ud800 ,\udc00',
      { key: 'a\ud800', value: { kind: 'string', value: '\udc00' }, bare: '\udc00' },
    ],
    // Backticks quote a key that holds commas or backticks.
    ['`a,b`,5', { key: 'a,b', value: { kind: 'number', text: '5' }, bare: '5' }],
    ['`we``ird` ,5', { key: 'we`ird', value: { kind: 'number', text: '5' }, bare: '5' }],
    ['` x `,5', { key: ' x ', value: { kind: 'number', text: '5' }, bare: '5' }],
    // Double quotes too, as everywhere else a request names a column.
    [
      '"zip code",\'40301\'',
      { key: 'zip code', value: { kind: 'string', value: '40301' }, bare: null },
    ],
    ['"a,b" , 5', { key: 'a,b', value: { kind: 'number', text: '5' }, bare: '5' }],
    ['"say ""hi""",5', { key: 'say "hi"', value: { kind: 'number', text: '5' }, bare: '5' }],
    ['"a`b",5', { key: 'a`b', value: { kind: 'number', text: '5' }, bare: '5' }],
    ['"größe.v2",5', { key: 'größe.v2', value: { kind: 'number', text: '5' }, bare: '5' }],
    // A hostile key is just a name; the plan stage finds no such column.
    [
      'id` = 1; DROP TABLE x; --,5',
      { key: 'id` = 1; DROP TABLE x; --', value: { kind: 'number', text: '5' }, bare: '5' },
    ],
  ])('%j', (text, expected) => {
    expect(parseKeyValue(text)).toEqual(expected);
  });
});

describe('parseKeyValue refusals', () => {
  test.each([
    [' ,5', 'the key column is empty'],
    ['``,5', 'the key column is empty'],
    ['id', 'a comma and a value must follow the key'],
    ['`id`', 'a comma and a value must follow the key'],
    ['`id', 'the key has no closing backtick'],
    ['"id,5', 'the key has no closing double quote'],
    ['"",5', 'the key column is empty'],
    ['"id" x,5', 'unexpected text after the quoted key at position 6'],
    ['`🎉` x,5', 'unexpected text after the quoted key at position 5'],
  ])('%j', (text, message) => {
    expect(() => parseKeyValue(text)).toThrow(message);
  });
});

describe('parseKeyValue, a digit value first', () => {
  test.each(['0', '17', '007', '9'.repeat(40)])('id,%s is what id, %s  gives', (digits) => {
    const match = parseKeyValue(`id,${digits}`);
    expect(match).toEqual({ key: 'id', value: { kind: 'number', text: digits }, bare: digits });
    expect(parseKeyValue(`id, ${digits}  `)).toEqual(match);
  });
});

describe('parseKeyRead', () => {
  test('read(<key>,<value>) as update takes it', () => {
    expect(isKeyRead("read(email,'a@b.c')")).toBe(true);
    expect(parseKeyRead("read(email,'a@b.c')")).toEqual({
      key: 'email',
      value: { kind: 'string', value: 'a@b.c' },
      bare: null,
    });
    expect(parseKeyRead('read(`a,b`,007)')).toEqual({
      key: 'a,b',
      value: { kind: 'number', text: '007' },
      bare: '007',
    });
  });

  test.each(['read', 'reads(id,1)', 'Read(id,1)', 'update(id,1)', ''])(
    '%j is no key read (404)',
    (segment) => {
      expect(isKeyRead(segment)).toBe(false);
    },
  );

  test.each<[string, string]>([
    ['read(id,1', "Read read(<key>,<value>): 'read(id,1' has no closing parenthesis"],
    ['read()', 'Read read(<key>,<value>): the key column is empty'],
    ['read(id)', 'Read read(<key>,<value>): a comma and a value must follow the key'],
  ])('%j fails with 400', (segment, message) => {
    expect(failure(() => parseKeyRead(segment))).toMatchObject({
      status: 400,
      code: 'INVALID_QUERY',
      message,
    });
  });
});
