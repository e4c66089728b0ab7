import { describe, expect, test } from '@jest/globals';
import { ApiError } from '../../../src/errors.js';
import { type PlannedFilter, planRead, type ReadPlan } from '../../../src/plan/read-plan.js';
import { rootSource } from '../../../src/plan/scope.js';
import { parseReadOptions, type QueryObject } from '../../../src/query/options.js';
import {
  compileCount,
  compileFilter,
  compileSelect,
  textOf,
} from '../../../src/sql/compile-read.js';
import type { CompiledQuery } from '../../../src/sql/compiled-query.js';
import { column, events, id, note, order, places, select, table } from '../fixtures/schema.js';

const plan = (query: QueryObject): ReadPlan => planRead(parseReadOptions(query), order);
const read = (query: QueryObject): CompiledQuery => compileSelect(plan(query));
/** The WHERE clause and parameters of `$select=id&$filter=<text>`. */
const where = (text: string): CompiledQuery => {
  const { sql, params } = read({ $select: 'id', $filter: text });
  return { sql: sql.replace(/^SELECT `id` FROM `order` WHERE /, ''), params };
};

const ALL = '`id`, `select`, `price`, `note`, `größe`, `we``ird`, `shipped`';

describe('compileSelect: statement shape', () => {
  test.each<[string, QueryObject, CompiledQuery]>([
    [
      '* names every column, never SELECT *',
      {},
      { sql: `SELECT ${ALL} FROM \`order\``, params: [] },
    ],
    [
      'select order is kept; names are backtick-quoted with `` doubled',
      { $select: 'we`ird,select,größe' },
      { sql: 'SELECT `we``ird`, `select`, `größe` FROM `order`', params: [] },
    ],
    [
      'orderby',
      { $select: 'id', $orderby: 'select desc, id' },
      { sql: 'SELECT `id` FROM `order` ORDER BY `select` DESC, `id` ASC', params: [] },
    ],
    [
      'top',
      { $select: 'id', $top: '10' },
      { sql: 'SELECT `id` FROM `order` ORDER BY `id` ASC LIMIT ?', params: ['10'] },
    ],
    [
      'top 0',
      { $select: 'id', $top: '0' },
      { sql: 'SELECT `id` FROM `order` ORDER BY `id` ASC LIMIT ?', params: ['0'] },
    ],
    [
      'top and skip',
      { $select: 'id', $top: '10', $skip: '20' },
      { sql: 'SELECT `id` FROM `order` ORDER BY `id` ASC LIMIT ? OFFSET ?', params: ['10', '20'] },
    ],
    [
      'skip alone',
      { $select: 'id', $skip: '5' },
      { sql: 'SELECT `id` FROM `order` LIMIT 18446744073709551615 OFFSET ?', params: ['5'] },
    ],
    [
      'largest $top',
      { $select: 'id', $top: '9007199254740991' },
      { sql: 'SELECT `id` FROM `order` ORDER BY `id` ASC LIMIT ?', params: ['9007199254740991'] },
    ],
    [
      'everything, parameters in text order',
      {
        $select: 'id,note',
        $filter: "select eq 'a' or id gt 3",
        $orderby: 'id desc',
        $top: '2',
        $skip: '4',
        $count: 'true',
      },
      {
        sql: 'SELECT `id`, `note` FROM `order` WHERE (`select` = ? OR `id` > ?) ORDER BY `id` DESC LIMIT ? OFFSET ?',
        params: ['a', 3, '2', '4'],
      },
    ],
  ])('%s', (_, query, expected) => {
    expect(read(query)).toEqual(expected);
  });
});

describe('compileCount', () => {
  test.each<[QueryObject, CompiledQuery]>([
    [{}, { sql: 'SELECT COUNT(*) FROM `order`', params: [] }],
    [
      { $select: 'id', $filter: 'id ge 2', $orderby: 'id', $top: '1', $skip: '1', $count: 'true' },
      { sql: 'SELECT COUNT(*) FROM `order` WHERE `id` >= ?', params: [2] },
    ],
  ])('%j ignores select, order, top and skip', (query, expected) => {
    expect(compileCount(plan(query))).toEqual(expected);
  });
});

describe('compileSelect: filters', () => {
  test.each<[string, string, unknown[]]>([
    // comparisons
    ['id eq 5', '`id` = ?', [5]],
    ['id ne 5', '`id` <> ?', [5]],
    ['id lt 5', '`id` < ?', [5]],
    ['id le 5', '`id` <= ?', [5]],
    ['id gt 5', '`id` > ?', [5]],
    ['id ge 5', '`id` >= ?', [5]],
    ['5 lt id', '? < `id`', [5]],
    ['id eq price', '`id` = `price`', []],
    ["'a' eq 'b'", '? = ?', ['a', 'b']],
    ["select eq 'x'", '`select` = ?', ['x']],
    ['shipped eq true', '`shipped` = ?', [1]],
    ['shipped ne false', '`shipped` <> ?', [0]],
    // null
    ['note eq null', '`note` IS NULL', []],
    ['null eq note', '`note` IS NULL', []],
    ['note ne null', '`note` IS NOT NULL', []],
    ['null ne note', '`note` IS NOT NULL', []],
    ['5 eq null', '? IS NULL', [5]],
    ['null eq null', '? IS NULL', [null]],
    ['null ne null', '? IS NOT NULL', [null]],
    // numbers
    ['id eq -0', '`id` = ?', [0]],
    ['id eq 007', '`id` = ?', [7]],
    ['id eq -9007199254740991', '`id` = ?', [-9007199254740991]],
    ['id eq 9007199254740992', '`id` = CAST(? AS DECIMAL(65,30))', ['9007199254740992']],
    ['id eq 18446744073709551615', '`id` = CAST(? AS DECIMAL(65,30))', ['18446744073709551615']],
    ['id eq -9223372036854775808', '`id` = CAST(? AS DECIMAL(65,30))', ['-9223372036854775808']],
    ['price eq 1.10', '`price` = CAST(? AS DECIMAL(65,30))', ['1.1']],
    ['price eq -0012.50', '`price` = CAST(? AS DECIMAL(65,30))', ['-12.5']],
    ['price eq 0.0', '`price` = CAST(? AS DECIMAL(65,30))', ['0']],
    ['price lt 0.1', '`price` < CAST(? AS DECIMAL(65,30))', ['0.1']],
    [
      `price eq ${'9'.repeat(35)}.${'9'.repeat(30)}`,
      '`price` = CAST(? AS DECIMAL(65,30))',
      [`${'9'.repeat(35)}.${'9'.repeat(30)}`],
    ],
    [
      `price eq 0.${'0'.repeat(29)}1${'0'.repeat(20)}`,
      '`price` = CAST(? AS DECIMAL(65,30))',
      [`0.${'0'.repeat(29)}1`],
    ],
    // beyond DECIMAL(65,30): a double
    [`price eq ${'9'.repeat(36)}.5`, '`price` = ?', [Number(`${'9'.repeat(36)}.5`)]],
    [`price eq 0.${'0'.repeat(30)}1`, '`price` = ?', [1e-31]],
    [`id eq 1${'0'.repeat(40)}`, '`id` = ?', [1e40]],
    // exponents: a double
    ['price gt 1.5e2', '`price` > ?', [150]],
    ['price gt 1E-3', '`price` > ?', [0.001]],
    ['price gt -0e5', '`price` > ?', [0]],
    ['price gt 1e-999', '`price` > ?', [0]],
    // in
    ['id in (1)', '`id` IN (?)', [1]],
    ["id in (1, '7', true, 2.5)", '`id` IN (?, ?, ?, CAST(? AS DECIMAL(65,30)))', [1, 7, 1, '2.5']],
    ['note in (null)', '`note` IS NULL', []],
    ["note in ('a', null, 'b', null)", '(`note` IN (?, ?) OR `note` IS NULL)', ['a', 'b']],
    // functions: LIKE with ! escaping !, % and _
    ["contains(select, 'abc')", "`select` LIKE ? ESCAPE '!'", ['%abc%']],
    ["startswith(select, 'abc')", "`select` LIKE ? ESCAPE '!'", ['abc%']],
    ["endswith(select, 'abc')", "`select` LIKE ? ESCAPE '!'", ['%abc']],
    ["contains(select, '100%_!x\\')", "`select` LIKE ? ESCAPE '!'", ['%100!%!_!!x\\%']],
    ["contains(select, '')", "`select` LIKE ? ESCAPE '!'", ['%%']],
    ["startswith(größe, 'ü''s')", "`größe` LIKE ? ESCAPE '!'", ["ü's%"]],
    // and / or / not, always parenthesised
    ['id eq 1 and id eq 2', '(`id` = ? AND `id` = ?)', [1, 2]],
    ['id eq 1 or id eq 2 or id eq 3', '(`id` = ? OR `id` = ? OR `id` = ?)', [1, 2, 3]],
    ['id eq 1 or id eq 2 and id eq 3', '(`id` = ? OR (`id` = ? AND `id` = ?))', [1, 2, 3]],
    ['(id eq 1 or id eq 2) and id eq 3', '((`id` = ? OR `id` = ?) AND `id` = ?)', [1, 2, 3]],
    ['not id eq 1', '(NOT (`id` = ?))', [1]],
    ['not note eq null', '(NOT (`note` IS NULL))', []],
    ['not (id eq 1 or id eq 2)', '(NOT (`id` = ? OR `id` = ?))', [1, 2]],
    ['not not id eq 1', '(NOT (NOT (`id` = ?)))', [1]],
    [
      "not contains(select, 'a') and id in (1, 2)",
      "((NOT (`select` LIKE ? ESCAPE '!')) AND `id` IN (?, ?))",
      ['%a%', 1, 2],
    ],
    ['not note in (1, null)', '(NOT ((`note` IN (?) OR `note` IS NULL)))', [1]],
    // hostile values stay parameters
    ["select eq ''' or ''1''=''1'", '`select` = ?', ["' or '1'='1"]],
    ["select eq 'x''; DROP TABLE `order`; --'", '`select` = ?', ["x'; DROP TABLE `order`; --"]],
    // a backslash is an ordinary character: it does not escape the closing quote
    ["select eq '\\' or 1 eq 1", '(`select` = ? OR ? = ?)', ['\\', 1, 1]],
  ])('%j', (text, sql, params) => {
    expect(where(text)).toEqual({ sql, params });
  });

  test.each<[string, string]>([
    ['id eq 1e999', 'The number 1e999 is out of range'],
    ['id eq -1e400', 'The number -1e400 is out of range'],
    [`id eq ${'9'.repeat(400)}`, `The number ${'9'.repeat(40)}… is out of range`],
  ])('%j → 400', (text, message) => {
    let error: unknown;
    try {
      where(text);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: 'INVALID_QUERY', message });
  });

  test('names never come from the request: a backtick in a filter is a syntax error, in a name it is doubled', () => {
    expect(() => where('`id` eq 1')).toThrow(/^Invalid \$filter at position 1: /);
    expect(() => where('we`ird eq 1')).toThrow(
      "Invalid $filter at position 3: expected an operator (eq, ne, lt, le, gt, ge or in), found unexpected character '`'",
    );
    expect(read({ $select: 'we`ird', $orderby: 'we`ird desc' })).toEqual({
      sql: 'SELECT `we``ird` FROM `order` ORDER BY `we``ird` DESC',
      params: [],
    });
  });
});

describe('compileFilter on hand-built plans', () => {
  test.each<[PlannedFilter, string]>([
    [{ kind: 'and', items: [] }, '(1 = 1)'],
    [{ kind: 'or', items: [] }, '(1 = 0)'],
    [
      {
        kind: 'in',
        column: { kind: 'column', source: rootSource(order), column: id },
        values: [],
        orNull: false,
      },
      '(1 = 0)',
    ],
    [
      {
        kind: 'and',
        items: [
          {
            kind: 'isNull',
            operand: { kind: 'column', source: rootSource(order), column: note },
            negated: false,
          },
        ],
      },
      '(`note` IS NULL)',
    ],
    [
      {
        kind: 'match',
        fn: 'contains',
        column: { kind: 'column', source: rootSource(order), column: select },
        value: '%',
      },
      "`select` LIKE ? ESCAPE '!'",
    ],
  ])('%j', (filter, sql) => {
    expect(compileFilter(filter, [])).toBe(sql);
  });
});

describe('compileSelect: functions and date/time literals (docs/filters.md)', () => {
  /** The WHERE clause and parameters of `$select=id&$filter=<text>` on `events`. */
  const whereEvents = (text: string): CompiledQuery => {
    const { sql, params } = compileSelect(
      planRead(parseReadOptions({ $select: 'id', $filter: text }), events),
    );
    return { sql: sql.replace(/^SELECT `id` FROM `events` WHERE /, ''), params };
  };

  test.each<[string, string, unknown[]]>([
    [
      'at gt 2024-01-03T00:00:00.000Z',
      '`at` > CAST(? AS DATETIME(6))',
      ['2024-01-03 00:00:00.000000'],
    ],
    [
      'at eq 2024-01-03T01:00:00+01:00',
      '`at` = CAST(? AS DATETIME(6))',
      ['2024-01-03 00:00:00.000000'],
    ],
    [
      'stamp le 2024-01-03T00:00:00.123Z',
      '`stamp` <= CAST(? AS DATETIME(6))',
      ['2024-01-03 00:00:00.123000'],
    ],
    ['day eq 2024-01-03', '`day` = CAST(? AS DATE)', ['2024-01-03']],
    ['at ge 2024-01-03', '`at` >= CAST(? AS DATE)', ['2024-01-03']],
    ['clock lt 12:30:00.5', '`clock` < CAST(? AS TIME(6))', ['12:30:00.500000']],
    [
      'at in (2024-01-03, 2024-01-03T10:00:00Z, null)',
      '(`at` IN (CAST(? AS DATE), CAST(? AS DATETIME(6))) OR `at` IS NULL)',
      ['2024-01-03', '2024-01-03 10:00:00.000000'],
    ],
    ["tolower(select) eq 'a'", 'LOWER(`select`) = ?', ['a']],
    ["toupper(select) eq 'A'", 'UPPER(`select`) = ?', ['A']],
    ["trim(select) eq 'a'", 'TRIM(`select`) = ?', ['a']],
    ['length(select) gt 3', 'CHAR_LENGTH(`select`) > ?', [3]],
    ['year(at) eq 2024', 'YEAR(`at`) = ?', [2024]],
    ['month(day) eq 2', 'MONTH(`day`) = ?', [2]],
    ['day(stamp) eq 29', 'DAYOFMONTH(`stamp`) = ?', [29]],
    ['hour(clock) eq 1', 'HOUR(`clock`) = ?', [1]],
    ['minute(at) eq 1', 'MINUTE(`at`) = ?', [1]],
    ['second(at) eq 1', 'SECOND(`at`) = ?', [1]],
    ['date(at) eq 2024-01-03', 'DATE(`at`) = CAST(? AS DATE)', ['2024-01-03']],
    ['year(at) in (2023, 2024)', 'YEAR(`at`) IN (?, ?)', [2023, 2024]],
    ['year(at) ne null', 'YEAR(`at`) IS NOT NULL', []],
    ["contains(tolower(select),'cat-7')", "LOWER(`select`) LIKE ? ESCAPE '!'", ['%cat-7%']],
    ["startswith(trim(select),'a%')", "TRIM(`select`) LIKE ? ESCAPE '!'", ['a!%%']],
    [
      "not (year(at) eq 2024 and contains(toupper(select), 'X'))",
      "(NOT (YEAR(`at`) = ? AND UPPER(`select`) LIKE ? ESCAPE '!'))",
      [2024, '%X%'],
    ],
  ])('%j', (text, sql, params) => {
    expect(whereEvents(text)).toEqual({ sql, params });
  });
});

describe('spatial columns are read as WKB', () => {
  const placesPlan = (query: QueryObject) => planRead(parseReadOptions(query), places);

  test('at the top, named as the column; MySQL asked for longitude first', () => {
    expect(compileSelect(placesPlan({}))).toEqual({
      sql: 'SELECT `id`, `select`, ST_AsBinary(`spot`) AS `spot` FROM `places`',
      params: [],
    });
    expect(compileSelect(placesPlan({}), 'mysql')).toEqual({
      sql: "SELECT `id`, `select`, ST_AsBinary(`spot`, 'axis-order=long-lat') AS `spot` FROM `places`",
      params: [],
    });
    // The select list is kept per flavour: asking again gives each its own.
    expect(compileSelect(placesPlan({})).sql).toContain('ST_AsBinary(`spot`) AS');
  });

  test('inside an expanded relation, as base64 text of the same WKB', () => {
    const spot = places.columnsByName.get('spot') as (typeof places.columns)[number];
    expect(textOf('`t1`.`spot`', spot, { qualify: true, flavour: 'mariadb' })).toBe(
      'TO_BASE64(ST_AsBinary(`t1`.`spot`))',
    );
    expect(textOf('`t1`.`spot`', spot, { qualify: true, flavour: 'mysql' })).toBe(
      "TO_BASE64(ST_AsBinary(`t1`.`spot`, 'axis-order=long-lat'))",
    );
  });
});

describe('binary columns: a base64 literal is bound as its bytes', () => {
  const bin = column('bin', {
    dataType: 'varbinary',
    columnType: 'varbinary(8)',
    kind: 'binary',
    nullable: true,
    maxLength: 8,
    numericPrecision: null,
    numericScale: null,
  });
  const blobs = table('blobs', [id, bin], ['id']);
  const filtered = (text: string) =>
    compileSelect(planRead(parseReadOptions({ $select: 'id', $filter: text }), blobs));

  test.each<[string, string, unknown[]]>([
    ["bin eq 'AAEC'", '`bin` = ?', [Buffer.from([0, 1, 2])]],
    ["bin ne '/w=='", '`bin` <> ?', [Buffer.from([255])]],
    [
      "bin in ('AAEC', '', null)",
      '(`bin` IN (?, ?) OR `bin` IS NULL)',
      [Buffer.from([0, 1, 2]), Buffer.alloc(0)],
    ],
  ])('%s', (text, condition, params) => {
    expect(filtered(text)).toEqual({
      sql: `SELECT \`id\` FROM \`blobs\` WHERE ${condition}`,
      params,
    });
  });
});
