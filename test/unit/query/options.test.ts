import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import type { ReadRequest } from '../../../src/query/ast.js';
import { parseReadOptions, type QueryObject } from '../../../src/query/options.js';

const DEFAULTS: ReadRequest = {
  select: '*',
  filter: null,
  orderBy: [],
  top: null,
  skip: null,
  count: false,
  continues: false,
};

function failure(query: QueryObject): ApiError {
  try {
    parseReadOptions(query);
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error(`accepted: ${JSON.stringify(query)}`);
}

describe('parseReadOptions: accepted', () => {
  test.each<[string, QueryObject, Partial<ReadRequest>]>([
    ['nothing', {}, {}],
    [
      'other keys without $ are ignored (cache busters, tracking)',
      { _: '1700000000', foo: ['1', '2'], utm_source: 'x', access_token: 'y', selected: 'z' },
      {},
    ],
    ['undefined values are absent', { $select: undefined, $top: undefined }, {}],
    ['$select=*', { $select: '*' }, { select: '*' }],
    ['$select= * ', { $select: ' * ' }, { select: '*' }],
    [
      '$select list',
      { $select: 'id,select, größe ,we`ird' },
      { select: ['id', 'select', 'größe', 'we`ird'] },
    ],
    ['$select keeps the given order', { $select: 'b,a' }, { select: ['b', 'a'] }],
    ['$select names are exact', { $select: 'ID,id' }, { select: ['ID', 'id'] }],
    ['* inside a list is a name', { $select: '*,id' }, { select: ['*', 'id'] }],
    ['$select with a one-element array', { $select: ['id'] }, { select: ['id'] }],
    [
      '$filter',
      { $filter: 'id eq 1' },
      {
        filter: {
          kind: 'compare',
          op: 'eq',
          left: { kind: 'column', name: 'id', position: 1 },
          right: { kind: 'number', text: '1' },
          position: 4,
        },
      },
    ],
    ['$orderby one column', { $orderby: 'id' }, { orderBy: [{ column: 'id', direction: 'asc' }] }],
    [
      '$orderby directions, any case, whitespace tolerant',
      { $orderby: ' a , b DESC,c   Asc ,\td\tdesc ' },
      {
        orderBy: [
          { column: 'a', direction: 'asc' },
          { column: 'b', direction: 'desc' },
          { column: 'c', direction: 'asc' },
          { column: 'd', direction: 'desc' },
        ],
      },
    ],
    [
      '$orderby keeps names exact',
      { $orderby: 'select desc,größe' },
      {
        orderBy: [
          { column: 'select', direction: 'desc' },
          { column: 'größe', direction: 'asc' },
        ],
      },
    ],
    ['$top and $skip', { $top: '10', $skip: '20' }, { top: 10, skip: 20 }],
    ['$top=0, $skip=0', { $top: '0', $skip: '0' }, { top: 0, skip: 0 }],
    ['leading zeros', { $top: '007' }, { top: 7 }],
    ['$top = 2^53-1', { $top: '9007199254740991' }, { top: 9007199254740991 }],
    ['$count=true', { $count: 'true' }, { count: true }],
    ['$count=TRUE', { $count: 'TRUE' }, { count: true }],
    ['$count=False', { $count: 'False' }, { count: false }],
  ])('%s', (_, query, expected) => {
    expect(parseReadOptions(query)).toEqual({ ...DEFAULTS, ...expected });
  });
});

describe('parseReadOptions: rejected with 400', () => {
  test.each<[string, QueryObject, string, string]>([
    ...[
      ['filter', '$filter'],
      ['select', '$select'],
      ['orderby', '$orderby'],
      ['orderBy', '$orderby'],
      ['top', '$top'],
      ['TOP', '$top'],
      ['skip', '$skip'],
      ['count', '$count'],
    ].map(([key, meant]): [string, QueryObject, string, string] => [
      `${key} without $`,
      { [key as string]: 'x' },
      'OPTION_WITHOUT_DOLLAR',
      `Unknown query parameter '${key}': did you mean '${meant}'?`,
    ]),
    [
      'a key without $ next to good options',
      { $top: '1', filter: 'id eq 1' },
      'OPTION_WITHOUT_DOLLAR',
      "Unknown query parameter 'filter': did you mean '$filter'?",
    ],
    [
      'a nameless parameter (a shell replaced $filter with nothing)',
      { '': 'id eq 1' },
      'OPTION_WITHOUT_DOLLAR',
      "A query parameter has no name ('?=…'): did a shell replace $filter inside double quotes? Quote the URL with single quotes or write %24filter",
    ],
    [
      'unknown option',
      { $foo: '1' },
      'INVALID_QUERY',
      "Unknown query option '$foo'; the options are $select, $filter, $orderby, $top, $skip, $count, $expand, $apply, $skiptoken",
    ],
    [
      'options are case-sensitive',
      { $Select: '*' },
      'INVALID_QUERY',
      "Unknown query option '$Select'; the options are $select, $filter, $orderby, $top, $skip, $count, $expand, $apply, $skiptoken",
    ],
    [
      '$ alone',
      { $: '' },
      'INVALID_QUERY',
      "Unknown query option '$'; the options are $select, $filter, $orderby, $top, $skip, $count, $expand, $apply, $skiptoken",
    ],
    [
      'repeated $top',
      { $top: ['1', '2'] },
      'INVALID_QUERY',
      "Query option '$top' is given more than once",
    ],
    [
      'repeated $filter',
      { $filter: ['id eq 1', 'id eq 1'] },
      'INVALID_QUERY',
      "Query option '$filter' is given more than once",
    ],
    [
      'empty $select',
      { $select: '' },
      'INVALID_QUERY',
      '$select is empty; use * or a comma-separated list of column names',
    ],
    [
      'blank $select',
      { $select: '  ' },
      'INVALID_QUERY',
      '$select is empty; use * or a comma-separated list of column names',
    ],
    ['empty $select item', { $select: 'a,,b' }, 'INVALID_QUERY', '$select item 2 is empty'],
    ['trailing comma in $select', { $select: 'a,' }, 'INVALID_QUERY', '$select item 2 is empty'],
    [
      'duplicate $select',
      { $select: 'a,b, a' },
      'INVALID_QUERY',
      "$select names column 'a' more than once",
    ],
    [
      'empty $filter',
      { $filter: '' },
      'INVALID_QUERY',
      '$filter is empty; leave it out to read every row',
    ],
    [
      'bad $filter',
      { $filter: 'id eq' },
      'FILTER_SYNTAX',
      'Invalid $filter at position 6: expected a column or a value, found end of filter',
    ],
    ['empty $orderby', { $orderby: '' }, 'INVALID_QUERY', '$orderby item 1 is empty'],
    ['empty $orderby item', { $orderby: 'a,,b' }, 'INVALID_QUERY', '$orderby item 2 is empty'],
    [
      'trailing comma in $orderby',
      { $orderby: 'a desc, ' },
      'INVALID_QUERY',
      '$orderby item 2 is empty',
    ],
    [
      'bad direction',
      { $orderby: 'a up' },
      'INVALID_QUERY',
      "$orderby item 1 ('a up') must be a column name, optionally followed by asc or desc",
    ],
    [
      'three words',
      { $orderby: 'b, a asc desc' },
      'INVALID_QUERY',
      "$orderby item 2 ('a asc desc') must be a column name, optionally followed by asc or desc",
    ],
    [
      'direction alone is a column with a bad direction',
      { $orderby: 'asc desc x' },
      'INVALID_QUERY',
      "$orderby item 1 ('asc desc x') must be a column name, optionally followed by asc or desc",
    ],
    [
      'negative $top',
      { $top: '-1' },
      'INVALID_QUERY',
      "$top must be a non-negative integer, got '-1'",
    ],
    [
      'signed $top',
      { $top: '+1' },
      'INVALID_QUERY',
      "$top must be a non-negative integer, got '+1'",
    ],
    [
      'fractional $top',
      { $top: '1.5' },
      'INVALID_QUERY',
      "$top must be a non-negative integer, got '1.5'",
    ],
    [
      'exponent $skip',
      { $skip: '1e3' },
      'INVALID_QUERY',
      "$skip must be a non-negative integer, got '1e3'",
    ],
    [
      'padded $skip',
      { $skip: ' 1' },
      'INVALID_QUERY',
      "$skip must be a non-negative integer, got ' 1'",
    ],
    ['empty $top', { $top: '' }, 'INVALID_QUERY', "$top must be a non-negative integer, got ''"],
    [
      'non-ASCII digits',
      { $top: '١٢' },
      'INVALID_QUERY',
      "$top must be a non-negative integer, got '١٢'",
    ],
    [
      '$top = 2^53',
      { $top: '9007199254740992' },
      'INVALID_QUERY',
      '$top must be at most 9007199254740991, got 9007199254740992',
    ],
    [
      'huge $skip',
      { $skip: '9'.repeat(400) },
      'INVALID_QUERY',
      `$skip must be at most 9007199254740991, got ${'9'.repeat(40)}…`,
    ],
    ['bad $count', { $count: 'yes' }, 'INVALID_QUERY', "$count must be true or false, got 'yes'"],
    ['numeric $count', { $count: '1' }, 'INVALID_QUERY', "$count must be true or false, got '1'"],
    ['empty $count', { $count: '' }, 'INVALID_QUERY', "$count must be true or false, got ''"],
  ])('%s', (_, query, code, message) => {
    const error = failure(query);
    expect(error.status).toBe(400);
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
  });
});
