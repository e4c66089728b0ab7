import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import type { Literal } from '../../../src/query/ast.js';
import { asciiKeyword, parseLiteral, type Token, tokenize } from '../../../src/query/lexer.js';

/** Tokens without the trailing `end`, as compact tuples: [kind, text-or-value-or-problem, position]. */
function lex(text: string): [string, string, number][] {
  const tokens = tokenize(text);
  const end = tokens[tokens.length - 1] as Token;
  expect(end.kind).toBe('end');
  return tokens.slice(0, -1).map((t) => {
    switch (t.kind) {
      case 'string':
        return [t.kind, t.value, t.position];
      case 'invalid':
        return [t.kind, t.problem, t.position];
      case 'end':
        throw new Error('end before the last token');
      default:
        return [t.kind, t.text, t.position];
    }
  });
}

describe('tokenize', () => {
  test.each<[string, [string, string, number][]]>([
    ['', []],
    ['   \t\r\n ', []],
    [
      'id eq 5',
      [
        ['word', 'id', 1],
        ['word', 'eq', 4],
        ['number', '5', 7],
      ],
    ],
    [
      '(a,b)',
      [
        ['lparen', '(', 1],
        ['word', 'a', 2],
        ['comma', ',', 3],
        ['word', 'b', 4],
        ['rparen', ')', 5],
      ],
    ],
    ["'it''s'", [['string', "it's", 1]]],
    ["''", [['string', '', 1]]],
    ["''''", [['string', "'", 1]]],
    ["'a, (b) or c'", [['string', 'a, (b) or c', 1]]],
    ["'100%_done!'", [['string', '100%_done!', 1]]],
    ["'日本 ü 🎉'", [['string', '日本 ü 🎉', 1]]],
    [
      "'x'and",
      [
        ['string', 'x', 1],
        ['word', 'and', 4],
      ],
    ],
    ['-3.25e+10', [['number', '-3.25e+10', 1]]],
    [
      '0 12 1.5 -0 1e5 1E-5 00.50',
      [
        ['number', '0', 1],
        ['number', '12', 3],
        ['number', '1.5', 6],
        ['number', '-0', 10],
        ['number', '1e5', 13],
        ['number', '1E-5', 17],
        ['number', '00.50', 22],
      ],
    ],
    // A number must have digits after `.` / `e`; what follows is a separate token.
    [
      '1.',
      [
        ['number', '1', 1],
        ['invalid', "unexpected character '.'", 2],
      ],
    ],
    ['1e', [['word', '1e', 1]]],
    // Names: letters, digits, _, $, any Unicode letter; may start with a digit.
    [
      'größe $x_1 名前 2fa_enabled 1e5x',
      [
        ['word', 'größe', 1],
        ['word', '$x_1', 7],
        ['word', '名前', 12],
        ['word', '2fa_enabled', 15],
        ['word', '1e5x', 27],
      ],
    ],
    // Positions count characters (code points), not UTF-16 units or bytes.
    [
      "'🎉🎉' eq x",
      [
        ['string', '🎉🎉', 1],
        ['word', 'eq', 6],
        ['word', 'x', 9],
      ],
    ],
    [
      'a#b',
      [
        ['word', 'a', 1],
        ['invalid', "unexpected character '#'", 2],
      ],
    ],
    [
      'a eq `b`',
      [
        ['word', 'a', 1],
        ['word', 'eq', 3],
        ['invalid', "unexpected character '`'", 6],
      ],
    ],
    [
      // Double quotes quote a column name (a name that is not a plain identifier).
      'a eq "b"',
      [
        ['word', 'a', 1],
        ['word', 'eq', 3],
        ['name', '"b"', 6],
      ],
    ],
    [
      'x eq -y',
      [
        ['word', 'x', 1],
        ['word', 'eq', 3],
        ['invalid', "unexpected character '-'", 6],
      ],
    ],
    [
      'x eq 1.5abc',
      [
        ['word', 'x', 1],
        ['word', 'eq', 3],
        ['invalid', "a malformed number '1.5abc'", 6],
      ],
    ],
    ['-5abc', [['invalid', "a malformed number '-5abc'", 1]]],
    [
      "name eq 'abc",
      [
        ['word', 'name', 1],
        ['word', 'eq', 6],
        ['invalid', 'an unterminated string', 9],
      ],
    ],
    ["'it''", [['invalid', 'an unterminated string', 1]]],
    [
      'id eq 1; DROP TABLE x',
      [
        ['word', 'id', 1],
        ['word', 'eq', 4],
        ['number', '1', 7],
        ['invalid', "unexpected character ';'", 8],
      ],
    ],
  ])('%j', (text, expected) => {
    expect(lex(text)).toEqual(expected);
  });

  test('the end token sits one past the last character', () => {
    expect(tokenize('ab 🎉').at(-1)).toEqual({ kind: 'end', position: 5 });
    expect(tokenize('').at(-1)).toEqual({ kind: 'end', position: 1 });
  });
});

describe('tokenize with steps ($apply)', () => {
  const kinds = (text: string, steps: boolean) =>
    tokenize(text, { steps })
      .slice(0, -1)
      .map((t) => (t.kind === 'invalid' ? `invalid@${t.position}` : t.kind));

  test('a `/` after `)` separates steps, spaces around it allowed; without steps it is refused', () => {
    expect(kinds('f(a)/g(b)', true)).toEqual([
      'word',
      'lparen',
      'word',
      'rparen',
      'slash',
      'word',
      'lparen',
      'word',
      'rparen',
    ]);
    expect(kinds('f(a) / g', true)).toEqual(['word', 'lparen', 'word', 'rparen', 'slash', 'word']);
    expect(kinds('f(a)/g', false)).toEqual(['word', 'lparen', 'word', 'rparen', 'invalid@5']);
    // paths are as ever; a `/` anywhere else is still no token
    expect(kinds('a/b', true)).toEqual(['word', 'slash', 'word']);
    expect(kinds('a /b', true)).toEqual(['word', 'invalid@3']);
    expect(kinds('(a)//b', true)).toEqual(['lparen', 'word', 'rparen', 'slash', 'invalid@5']);
  });
});

describe('asciiKeyword', () => {
  test.each<[string, string | null]>([
    ['EQ', 'eq'],
    ['And', 'and'],
    ['nOt', 'not'],
    ['größe', null],
    ['\u212Aey', null], // KELVIN SIGN lower-cases to an ASCII k
    ['a1', null],
  ])('%j → %j', (text, expected) => {
    expect(asciiKeyword(text)).toBe(expected);
  });
});

describe('parseLiteral', () => {
  test.each<[string, Literal]>([
    ['5', { kind: 'number', text: '5' }],
    ['-3.5', { kind: 'number', text: '-3.5' }],
    ['1e3', { kind: 'number', text: '1e3' }],
    ['007', { kind: 'number', text: '007' }],
    ['99999999999999999999999', { kind: 'number', text: '99999999999999999999999' }],
    ['true', { kind: 'boolean', value: true }],
    ['FALSE', { kind: 'boolean', value: false }],
    ['Null', { kind: 'null' }],
    ['abc', { kind: 'string', value: 'abc' }],
    ['0x10', { kind: 'string', value: '0x10' }],
    ['1.5abc', { kind: 'string', value: '1.5abc' }],
    ['-', { kind: 'string', value: '-' }],
    ["O'Brien", { kind: 'string', value: "O'Brien" }],
    ['hello world', { kind: 'string', value: 'hello world' }],
    ['  42 ', { kind: 'number', text: '42' }],
    ["'O''Brien, Jo'", { kind: 'string', value: "O'Brien, Jo" }],
    ["'null'", { kind: 'string', value: 'null' }],
    ["'5'", { kind: 'string', value: '5' }],
    ["''", { kind: 'string', value: '' }],
    ["' padded '", { kind: 'string', value: ' padded ' }],
    ["'ü, 日本 (x)'", { kind: 'string', value: 'ü, 日本 (x)' }],
  ])('%j', (text, expected) => {
    expect(parseLiteral(text)).toEqual(expected);
  });

  test.each<[string, string]>([
    ['', "The key value is empty; write '' for an empty string"],
    ['  ', "The key value is empty; write '' for an empty string"],
    [
      "'abc",
      "Invalid key value 'abc: the string has no closing quote (write '' for a quote inside it)",
    ],
    [
      "'O'Brien'",
      "Invalid key value 'O'Brien': unexpected text after the closing quote at position 4 (write '' for a quote inside a string)",
    ],
    [
      " 'a' b",
      "Invalid key value 'a' b: unexpected text after the closing quote at position 5 (write '' for a quote inside a string)",
    ],
  ])('%j fails', (text, message) => {
    let error: unknown;
    try {
      parseLiteral(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: 'INVALID_QUERY', message });
  });
});

describe('parseLiteral, digits first', () => {
  // A bare digit run takes a shortcut (hot path); the same digits between spaces go the whole way.
  test.each(['0', '7', '007', '42', '9007199254740993', '1'.repeat(80), '00000'])(
    '%s is the number it would be with spaces around it',
    (digits) => {
      expect(parseLiteral(digits)).toEqual({ kind: 'number', text: digits });
      expect(parseLiteral(` ${digits}\t`)).toEqual(parseLiteral(digits));
    },
  );

  test.each<[string, Literal]>([
    ['٣', { kind: 'string', value: '٣' }],
    ['１２', { kind: 'string', value: '１２' }],
    ['12a', { kind: 'string', value: '12a' }],
    ['-1', { kind: 'number', text: '-1' }],
    ['1.5', { kind: 'number', text: '1.5' }],
    ['1e3', { kind: 'number', text: '1e3' }],
    [' 12', { kind: 'number', text: '12' }],
  ])('%j, not a bare ASCII digit run, goes the whole way', (text, literal) => {
    expect(parseLiteral(text)).toEqual(literal);
  });
});
