/**
 * sameData and sameTables (db/schema-change.ts): a re-read schema equal to the one held keeps the held tables,
 * so it must see every difference a re-read can bring — a column's type, nullability, default,
 * order, a table's kind, primary key or triggers, a table more or less — and no difference
 * between two reads of the same schema.
 */
import { describe, expect, test } from '@jest/globals';
import { sameData, sameTables, schemaFingerprint } from '../../../src/db/schema-change.js';
import type { TableInfo } from '../../../src/db/schema-types.js';
import { ApiError, databaseUnavailable, queryTimeout } from '../../../src/errors.js';
import type { Database } from '../../../src/execute/database.js';
import { column, id, note, price, table } from '../fixtures/schema.js';

/** What two reads of one schema give: equal data, different objects. */
const read = () =>
  new Map<string, TableInfo>([
    ['items', { ...table('items', [id, price, note], ['id']), hasTriggers: false }],
    ['tags', table('tags', [column('name')])],
  ]);

const changed = (change: (tables: Map<string, TableInfo>) => void) => {
  const tables = read();
  change(tables);
  return tables;
};
const items = (tables: Map<string, TableInfo>) => tables.get('items') as TableInfo;
const withColumns = (t: TableInfo, columns: TableInfo['columns']): TableInfo => ({
  ...t,
  columns,
  columnsByName: new Map(columns.map((c) => [c.name, c])),
});

describe('sameData', () => {
  test('two reads of one schema are the same', () => {
    expect(read()).not.toBe(read());
    expect(sameData(read(), read())).toBe(true);
    expect(sameTables(read(), read())).toBe(true);
  });

  test('a row count alone is no change of the tables', () => {
    expect(
      sameTables(
        read(),
        changed((t) => t.set('items', { ...items(t), rows: 42 })),
      ),
    ).toBe(true);
  });

  test.each<[string, (tables: Map<string, TableInfo>) => void]>([
    ['a table more', (t) => t.set('more', table('more', [id]))],
    ['a table less', (t) => t.delete('tags')],
    ['a table renamed', (t) => t.set('tags2', t.get('tags') as TableInfo).delete('tags')],
    [
      'a table became a view',
      (t) => t.set('tags', { ...(t.get('tags') as TableInfo), kind: 'view' }),
    ],
    [
      'a primary key',
      (t) => t.set('tags', { ...(t.get('tags') as TableInfo), primaryKey: ['name'] }),
    ],
    ['a trigger', (t) => t.set('items', { ...items(t), hasTriggers: true })],
    ['a column more', (t) => t.set('items', withColumns(items(t), [id, price, note, column('x')]))],
    ['columns in another order', (t) => t.set('items', withColumns(items(t), [id, note, price]))],
    [
      'a column type',
      (t) =>
        t.set(
          'items',
          withColumns(items(t), [id, { ...price, columnType: 'decimal(12,2)' }, note]),
        ),
    ],
    [
      'a column now nullable',
      (t) => t.set('items', withColumns(items(t), [id, { ...price, nullable: true }, note])),
    ],
    [
      'a default that became an expression',
      (t) =>
        t.set('items', withColumns(items(t), [id, price, { ...note, constantDefault: false }])),
    ],
  ])('%s is a change', (_label, change) => {
    expect(sameData(read(), changed(change))).toBe(false);
    expect(sameData(changed(change), read())).toBe(false);
    expect(sameTables(read(), changed(change))).toBe(false);
    expect(sameTables(changed(change), read())).toBe(false);
  });

  test.each<[unknown, unknown, boolean]>([
    [1, 1, true],
    [1, '1', false],
    [null, null, true],
    [null, {}, false],
    [[1, [2]], [1, [2]], true],
    [[1], [1, 2], false],
    [[], {}, false],
    [{ a: undefined }, {}, false],
    [{ a: 1, b: 2 }, { b: 2, a: 1 }, true],
    [new Map([[1, { a: 1 }]]), new Map([[1, { a: 1 }]]), true],
    [new Map([[1, 1]]), new Map([[2, 1]]), false],
    [new Map(), {}, false],
  ])('%j and %j: %s', (a, b, same) => {
    expect(sameData(a, b)).toBe(same);
  });
});

describe('schemaFingerprint', () => {
  const failing = (error: unknown) =>
    ({ rows: () => Promise.reject(error) }) as unknown as Database;

  test('one string from one statement, naming the database once per source', async () => {
    const asked: { sql: string; params: readonly unknown[] }[] = [];
    const db = {
      rows: (query: { sql: string; params: readonly unknown[] }) => {
        asked.push(query);
        return Promise.resolve([{ fingerprint: '2:1 20:3 0:0 1:4' }]);
      },
    } as unknown as Database;
    expect(await schemaFingerprint(db, 'shop')).toBe('2:1 20:3 0:0 1:4');
    expect(asked).toHaveLength(1);
    expect(asked[0]?.params).toEqual(Array(9).fill('shop'));
    expect(asked[0]?.sql.match(/\?/g)).toHaveLength(9);
    for (const source of [
      'TABLES',
      'COLUMNS',
      'VIEWS',
      'TRIGGERS',
      'STATISTICS',
      'CHECK_CONSTRAINTS',
      'KEY_COLUMN_USAGE',
      'ROUTINES',
      'PARAMETERS',
    ]) {
      expect(asked[0]?.sql).toContain(`information_schema.${source}`);
    }
  });

  test('a statement the server refuses: null (every re-read is then a full one)', async () => {
    const refused = Object.assign(new Error('Unknown table'), { code: 'ER_UNKNOWN_TABLE' });
    expect(await schemaFingerprint(failing(refused), 'shop')).toBeNull();
    expect(
      await schemaFingerprint(failing(new ApiError(500, 'INTERNAL_ERROR', 'x')), 'shop'),
    ).toBeNull();
  });

  test.each([
    ['unavailable', databaseUnavailable()],
    ['too slow', queryTimeout()],
  ])('MySQL %s is thrown: the caller does not go on to a full read', async (_label, error) => {
    await expect(schemaFingerprint(failing(error), 'shop')).rejects.toBe(error);
  });
});
