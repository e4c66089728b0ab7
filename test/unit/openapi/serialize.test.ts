/**
 * The description in pieces (openapi/serialize.ts): the JSON pieces are byte for byte
 * JSON.stringify of the document, and the YAML pieces parse to the same value as the whole
 * document written by the `yaml` package — on a real description and on members chosen to be
 * awkward (keys that need quotes, multi-line and long strings, empty objects and arrays).
 */
import { describe, expect, test } from '@jest/globals';
import { parse, stringify } from 'yaml';
import { buildOpenApiDocument } from '../../../src/http/openapi-document.js';
import { jsonPieces, yamlPieces } from '../../../src/openapi/serialize.js';
import { column, order, table } from '../fixtures/schema.js';

const config = {
  mode: 'auth' as const,
  baseUrl: 'https://api.example.com',
  maxFileSize: 1024,
  maxFiles: 2,
  bodyLimit: 1024,
};

const document = buildOpenApiDocument(
  [order, table('größe', [column('id')], ['id']), table('a: b', [column('#x')], [])],
  config,
  '1.2.3',
);

const awkward = {
  '': 'empty key',
  '400': { '': {}, yes: [], '#': null, 'a: b': { '- c': 'd' } },
  x: { y: { z: { deep: ['a', { b: 'multi\nline\n\n  indented\ntext' }] } } },
  long: { text: 'word '.repeat(60), quoted: 'it\'s "quoted" and: colon' },
  empty: {},
  skipped: undefined,
  list: [1, 'two', null, true, { three: 3 }],
  number: -1.5e-7,
};

describe('JSON pieces', () => {
  test.each([
    ['a description', document],
    ['awkward members', awkward],
  ])('%s: the pieces are JSON.stringify exactly', (_label, value) => {
    expect([...jsonPieces(value)].join('')).toBe(JSON.stringify(value));
  });

  test('values that are not objects, and objects past the depth, are one piece', () => {
    expect([...jsonPieces([1, { a: 2 }])]).toEqual(['[1,{"a":2}]']);
    expect([...jsonPieces('x')]).toEqual(['"x"']);
    expect([...jsonPieces({ a: { b: 1 } }, 1)]).toEqual(['{"a":', '{"b":1}', '}']);
  });

  test('a description comes in many small pieces', () => {
    const pieces = [...jsonPieces(document)];
    expect(pieces.length).toBeGreaterThan(30);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(
      JSON.stringify(document).length / 5,
    );
  });
});

describe('YAML pieces', () => {
  test.each([
    ['a description', document],
    ['awkward members', awkward],
  ])('%s: the pieces parse to what the whole document parses to', (_label, value) => {
    const text = [...yamlPieces(value as Record<string, unknown>)].join('');
    expect(parse(text)).toEqual(parse(stringify(value)));
    expect(parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
  });

  test('nested members are indented under their keys', () => {
    expect([...yamlPieces({ paths: { '/a': { get: { x: 1 } } }, n: 1 })].join('')).toBe(
      'paths:\n  /a:\n    get:\n      x: 1\nn: 1\n',
    );
  });
});
