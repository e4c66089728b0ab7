/**
 * db/schema.ts schemaSteps: the schema re-read makes its tables from the information_schema
 * rows in steps, run in slices (slices.ts), so that thousands of tables do not hold the event
 * loop. The tables are the ones the unsliced reader made (its loops are copied below as the
 * oracle, as they stood before the slicing) on a large fake row set with every feature a row
 * can bring; and the steps do pause, every hundred rows. relationSteps and sameTableSteps
 * likewise.
 */
import { describe, expect, test } from '@jest/globals';
import { type ForeignKey, nameRelations, relationSteps } from '../../../src/db/relations.js';
import {
  columnFromRow,
  OWN_TABLES,
  readSchema,
  type SchemaRows,
  schemaSteps,
  USERS_TABLE,
} from '../../../src/db/schema.js';
import { sameTableSteps, sameTables } from '../../../src/db/schema-change.js';
import type { ColumnInfo, ColumnRow, Relation, TableInfo } from '../../../src/db/schema-types.js';
import { runAtOnce, runInSlices } from '../../../src/slices.js';

const TABLES = 1200;
const name = (i: number) => `t${String(i).padStart(4, '0')}`;

/** The rows of TABLES tables of 10 columns: keys, JSON, spatial, views, triggers, own table. */
function largeRows(): SchemaRows {
  const tables: SchemaRows['tables'][number][] = [];
  const columns: ColumnRow[] = [];
  const foreignKeys: SchemaRows['foreignKeys'][number][] = [];
  const uniqueKeys: SchemaRows['uniqueKeys'][number][] = [];
  const jsonColumns = new Set<string>();
  const srids = new Map<string, number>();
  const withTriggers = new Set<string>();
  const readOnlyViews = new Set<string>();
  const col = (table: string, column: string, row: Partial<ColumnRow>) =>
    columns.push({
      TABLE_NAME: table,
      COLUMN_NAME: column,
      COLUMN_DEFAULT: null,
      IS_NULLABLE: 'YES',
      DATA_TYPE: 'int',
      COLUMN_TYPE: 'int(11)',
      CHARACTER_MAXIMUM_LENGTH: null,
      NUMERIC_PRECISION: '10',
      NUMERIC_SCALE: '0',
      COLUMN_KEY: '',
      EXTRA: '',
      ...row,
    });
  for (let i = 0; i < TABLES; i++) {
    const t = name(i);
    const view = i % 100 === 7;
    tables.push({
      TABLE_NAME: t,
      TABLE_TYPE: view ? 'VIEW' : 'BASE TABLE',
      TABLE_ROWS: view ? null : String(i * 3),
    });
    if (view && i % 200 === 7) readOnlyViews.add(t);
    if (i % 50 === 3) withTriggers.add(t);
    // Every tenth table has a two-column primary key, the rest an auto-increment id.
    const composite = i % 10 === 0;
    col(t, 'id', {
      IS_NULLABLE: 'NO',
      COLUMN_KEY: 'PRI',
      EXTRA: composite ? '' : 'auto_increment',
      COLUMN_TYPE: 'int(10) unsigned',
    });
    col(t, 'line', { IS_NULLABLE: 'NO', COLUMN_KEY: composite ? 'PRI' : '', COLUMN_DEFAULT: '0' });
    col(t, 'name', {
      IS_NULLABLE: 'NO',
      DATA_TYPE: 'varchar',
      COLUMN_TYPE: 'varchar(40)',
      CHARACTER_MAXIMUM_LENGTH: '40',
      NUMERIC_PRECISION: null,
      NUMERIC_SCALE: null,
      COLUMN_KEY: 'UNI',
    });
    col(t, 'price', {
      DATA_TYPE: 'decimal',
      COLUMN_TYPE: 'decimal(10,2)',
      COLUMN_DEFAULT: "'1.50'",
      NUMERIC_SCALE: '2',
    });
    col(t, 'doc', {
      DATA_TYPE: 'longtext',
      COLUMN_TYPE: 'longtext',
      CHARACTER_MAXIMUM_LENGTH: '4294967295',
      NUMERIC_PRECISION: null,
      NUMERIC_SCALE: null,
    });
    jsonColumns.add(`${t}\u0000doc`);
    col(t, 'spot', {
      DATA_TYPE: 'point',
      COLUMN_TYPE: 'point',
      NUMERIC_PRECISION: null,
      NUMERIC_SCALE: null,
    });
    if (i % 3 === 0) srids.set(`${t}\u0000spot`, 4326);
    col(t, 'at', {
      DATA_TYPE: 'datetime',
      COLUMN_TYPE: 'datetime(3)',
      COLUMN_DEFAULT: 'current_timestamp(3)',
      NUMERIC_PRECISION: null,
      NUMERIC_SCALE: null,
    });
    col(t, 'upper_name', {
      DATA_TYPE: 'varchar',
      COLUMN_TYPE: 'varchar(40)',
      EXTRA: 'VIRTUAL GENERATED',
      NUMERIC_PRECISION: null,
      NUMERIC_SCALE: null,
    });
    col(t, 'parent_id', {});
    col(t, 'other_id', { COLUMN_TYPE: 'bigint(20) unsigned', DATA_TYPE: 'bigint' });
    uniqueKeys.push({ TABLE_NAME: t, INDEX_NAME: 'name', COLUMN_NAME: 'name' });
    uniqueKeys.push({ TABLE_NAME: t, INDEX_NAME: 'pair', COLUMN_NAME: 'line' });
    uniqueKeys.push({ TABLE_NAME: t, INDEX_NAME: 'pair', COLUMN_NAME: 'price' });
    if (i > 0) {
      const parent = name(i - 1);
      for (const [key, column] of [
        ['fk_parent', 'parent_id'],
        ['fk_other', 'other_id'],
      ]) {
        foreignKeys.push({
          CONSTRAINT_NAME: `${key}_${i}`,
          TABLE_NAME: t,
          COLUMN_NAME: column as string,
          REFERENCED_TABLE_NAME: parent,
          REFERENCED_COLUMN_NAME: 'id',
        });
      }
    }
    if (i % 10 === 0 && i > 0) {
      // A two-column key, and one to a table that is not served.
      foreignKeys.push({
        CONSTRAINT_NAME: 'fk_pair',
        TABLE_NAME: t,
        COLUMN_NAME: 'id',
        REFERENCED_TABLE_NAME: name(i - 10),
        REFERENCED_COLUMN_NAME: 'id',
      });
      foreignKeys.push({
        CONSTRAINT_NAME: 'fk_pair',
        TABLE_NAME: t,
        COLUMN_NAME: 'line',
        REFERENCED_TABLE_NAME: name(i - 10),
        REFERENCED_COLUMN_NAME: 'line',
      });
      foreignKeys.push({
        CONSTRAINT_NAME: 'fk_gone',
        TABLE_NAME: t,
        COLUMN_NAME: 'other_id',
        REFERENCED_TABLE_NAME: 'elsewhere',
        REFERENCED_COLUMN_NAME: 'id',
      });
    }
  }
  tables.push({ TABLE_NAME: USERS_TABLE, TABLE_TYPE: 'BASE TABLE', TABLE_ROWS: '1' });
  col(USERS_TABLE, 'id', { IS_NULLABLE: 'NO', COLUMN_KEY: 'PRI' });
  return {
    tables,
    columns,
    jsonColumns,
    withTriggers,
    readOnlyViews,
    foreignKeys,
    uniqueKeys,
    srids,
  };
}

/** The reader's loops as they were before they ran in steps: the oracle. */
function unslicedTables(rows: SchemaRows): Map<string, TableInfo> {
  const uniqueKeys = (() => {
    const keys = new Map<string, Map<string, string[]>>();
    for (const row of rows.uniqueKeys) {
      const table = String(row.TABLE_NAME);
      const byIndex = keys.get(table) ?? new Map<string, string[]>();
      keys.set(table, byIndex);
      const index = String(row.INDEX_NAME);
      byIndex.set(index, [...(byIndex.get(index) ?? []), String(row.COLUMN_NAME)]);
    }
    return new Map([...keys].map(([table, byIndex]) => [table, [...byIndex.values()]]));
  })();
  const keys = (() => {
    const found = new Map<
      string,
      ForeignKey & { columns: string[]; referencedColumns: string[] }
    >();
    for (const row of rows.foreignKeys) {
      const id = `${row.TABLE_NAME}\u0000${row.CONSTRAINT_NAME}`;
      let key = found.get(id);
      if (key === undefined) {
        key = {
          name: String(row.CONSTRAINT_NAME),
          table: String(row.TABLE_NAME),
          columns: [],
          referencedTable: String(row.REFERENCED_TABLE_NAME),
          referencedColumns: [],
        };
        found.set(id, key);
      }
      key.columns.push(String(row.COLUMN_NAME));
      key.referencedColumns.push(String(row.REFERENCED_COLUMN_NAME));
    }
    return [...found.values()];
  })();
  const columnsByTable = new Map<string, ColumnInfo[]>();
  const primaryKeys = new Map<string, string[]>();
  for (const row of rows.columns) {
    const read = columnFromRow(row, rows.jsonColumns);
    const srid = rows.srids.get(`${row.TABLE_NAME}\u0000${row.COLUMN_NAME}`);
    const column = srid === undefined || read.kind !== 'geometry' ? read : { ...read, srid };
    const list = columnsByTable.get(row.TABLE_NAME) ?? [];
    list.push(column);
    columnsByTable.set(row.TABLE_NAME, list);
    if (row.COLUMN_KEY === 'PRI') {
      primaryKeys.set(row.TABLE_NAME, [...(primaryKeys.get(row.TABLE_NAME) ?? []), column.name]);
    }
  }
  const tables = new Map<string, TableInfo>();
  const relations = new Map<string, Map<string, Relation>>();
  for (const row of rows.tables) {
    const name = String(row.TABLE_NAME);
    if (OWN_TABLES.has(name)) continue;
    const columns = columnsByTable.get(name) ?? [];
    const named = new Map<string, Relation>();
    relations.set(name, named);
    const estimate = row.TABLE_ROWS === null ? null : Number(row.TABLE_ROWS);
    tables.set(name, {
      name,
      kind: String(row.TABLE_TYPE).toUpperCase().includes('VIEW') ? 'view' : 'table',
      ...(rows.readOnlyViews.has(name) ? { updatable: false as const } : {}),
      columns,
      columnsByName: new Map(columns.map((c) => [c.name, c])),
      primaryKey: primaryKeys.get(name) ?? [],
      uniqueKeys: uniqueKeys.get(name) ?? [],
      hasTriggers: rows.withTriggers.has(name),
      relations: named,
      ...(estimate === null || !Number.isFinite(estimate) || estimate < 0
        ? {}
        : { rows: estimate }),
    });
  }
  nameRelations(tables, relations, keys);
  return tables;
}

/**
 * The tables as plain text, every property in its order (a relation by the names it links), so
 * that two equal texts are two equal reads, down to the order of keys and entries.
 */
function text(tables: ReadonlyMap<string, TableInfo>): string {
  return JSON.stringify(
    [...tables].map(([key, table]) => [
      key,
      {
        ...table,
        columnsByName: [...table.columnsByName],
        relations: [...table.relations].map(([named, relation]) => [
          named,
          {
            ...relation,
            target: relation.target.name,
            on: relation.on.map(({ local, remote }) => [local.name, remote.name]),
          },
        ]),
      },
    ]),
  );
}

/** The value `steps` end with and how many times they paused. */
function counted<T>(steps: Generator<void, T>): { value: T; pauses: number } {
  let pauses = 0;
  for (;;) {
    const step = steps.next();
    if (step.done) return { value: step.value, pauses };
    pauses++;
  }
}

describe('schemaSteps', () => {
  const rows = largeRows();

  test('makes, from 12,000 column rows, the tables the unsliced reader made', () => {
    const expected = text(unslicedTables(rows));
    const { value } = counted(schemaSteps(rows));
    expect(value.size).toBe(TABLES);
    expect(text(value)).toBe(expected);
    // The fake rows bring what they were made to: keys, relations, JSON, SRIDs, views.
    const t = value.get(name(10)) as TableInfo;
    expect(t.primaryKey).toEqual(['id', 'line']);
    expect(t.uniqueKeys).toEqual([['name'], ['line', 'price']]);
    expect([...t.relations.keys()]).toEqual([
      'parent',
      'other',
      name(0),
      `${name(11)}_by_parent_id`,
      `${name(11)}_by_other_id`,
      name(20),
    ]);
    expect(t.columnsByName.get('doc')?.kind).toBe('json');
    expect(value.get(name(9))?.columnsByName.get('spot')?.srid).toBe(4326);
    expect(value.get(name(207))).toMatchObject({ kind: 'view', updatable: false });
    expect(value.has(USERS_TABLE)).toBe(false);
  });

  test('pauses every hundred rows, table or key', () => {
    const { pauses } = counted(schemaSteps(rows));
    const made =
      rows.columns.length + rows.tables.length + rows.uniqueKeys.length + rows.foreignKeys.length;
    // The relations' own steps add their pauses to these.
    expect(pauses).toBeGreaterThanOrEqual(Math.floor(made / 100));
  });

  test('readSchema, in slices, gives the tables the rows make at once', async () => {
    const answers: [string, unknown[]][] = [
      ['information_schema.TABLES', [...rows.tables]],
      ['information_schema.COLUMNS', [...rows.columns]],
      [
        'CHECK_CONSTRAINTS',
        [...rows.jsonColumns].map((key) => {
          const [table, column] = key.split('\u0000');
          return { TABLE_NAME: table, CHECK_CLAUSE: `json_valid(\`${column}\`)` };
        }),
      ],
      ['TRIGGERS', [...rows.withTriggers].map((table) => ({ EVENT_OBJECT_TABLE: table }))],
      [
        'information_schema.VIEWS',
        rows.tables
          .filter((row) => row.TABLE_TYPE === 'VIEW')
          .map((row) => ({
            TABLE_NAME: row.TABLE_NAME,
            IS_UPDATABLE: rows.readOnlyViews.has(row.TABLE_NAME) ? 'NO' : 'YES',
          })),
      ],
      ['KEY_COLUMN_USAGE', [...rows.foreignKeys]],
      ['STATISTICS', [...rows.uniqueKeys]],
      [
        'information_schema.GEOMETRY_COLUMNS',
        [...rows.srids].map(([key, srid]) => {
          const [table, column] = key.split('\u0000');
          return { G_TABLE_NAME: table, G_GEOMETRY_COLUMN: column, SRID: srid };
        }),
      ],
    ];
    const db = {
      rows: async <T extends object>({ sql }: { sql: string }): Promise<T[]> => {
        const answer = answers.find(([from]) => new RegExp(`${from}\\s`).test(sql));
        if (answer === undefined) throw new Error(`unexpected: ${sql}`);
        return answer[1] as T[];
      },
    };
    const read = await readSchema(db, 'd');
    expect(text(read)).toBe(text(unslicedTables(rows)));
  });
});

describe('relationSteps and sameTableSteps', () => {
  const rows = largeRows();

  test('relationSteps names what nameRelations names, pausing every hundred keys', () => {
    const a = runAtOnce(schemaSteps(rows));
    const b = runAtOnce(schemaSteps(rows));
    const keys: ForeignKey[] = [];
    for (let i = 1; i < TABLES; i++) {
      keys.push({
        name: `again_${i}`,
        table: name(i),
        columns: ['line'],
        referencedTable: name(i - 1),
        referencedColumns: ['id'],
      });
    }
    const maps = (tables: Map<string, TableInfo>) =>
      new Map(
        [...tables.values()].map((table) => [table.name, table.relations as Map<string, Relation>]),
      );
    nameRelations(a, maps(a), keys);
    const { pauses } = counted(relationSteps(b, maps(b), keys));
    expect(text(b)).toBe(text(a));
    expect(pauses).toBeGreaterThanOrEqual(Math.floor((3 * keys.length) / 100) - 1);
  });

  test('sameTableSteps agrees with sameTables, pausing every twenty tables', async () => {
    const a = runAtOnce(schemaSteps(rows));
    const b = runAtOnce(schemaSteps(rows));
    expect(a).not.toBe(b);
    const same = counted(sameTableSteps(a, b));
    expect(same.value).toBe(true);
    expect(same.pauses).toBe(TABLES / 20);
    expect(await runInSlices(sameTableSteps(a, b))).toBe(true);
    const last = b.get(name(TABLES - 1)) as TableInfo;
    b.set(last.name, { ...last, hasTriggers: !last.hasTriggers });
    expect(sameTables(a, b)).toBe(false);
    expect(await runInSlices(sameTableSteps(a, b))).toBe(false);
  });
});
