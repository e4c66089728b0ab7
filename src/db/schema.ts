/**
 * The schema cache: tables, views and columns of the served database, and its stored routines
 * (routines.ts), read from information_schema at start. A name the cache does not know triggers
 * one re-read (shared by concurrent callers, at most once per `refreshIntervalMs`), so a table
 * or routine created after start is served without a restart. The users table of auth mode is
 * never part of it.
 */

import { ApiError, unknownRoutine, unknownTable } from '../errors.js';
import { runInSlices } from '../slices.js';
import { isSpatialType } from './geometry.js';
import type { RowReader } from './pool.js';
import { type ForeignKey, relationSteps } from './relations.js';
import {
  type NamedRoutines,
  NO_ROUTINES,
  type RoutineInfo,
  type RoutineKind,
  type Routines,
  readRoutines,
} from './routines.js';
import { sameData, sameTableSteps, schemaFingerprint } from './schema-change.js';
import type { ColumnInfo, ColumnRow, JsonKind, Relation, TableInfo } from './schema-types.js';

export const USERS_TABLE = 'users_created_by_tablegate';
/** Each webhook's last delivered event and who delivers it (webhooks/store.ts). */
export const WEBHOOKS_TABLE = 'webhooks_created_by_tablegate';
/** The events a webhook gave up on (webhooks/store.ts). */
export const WEBHOOK_DEAD_LETTERS_TABLE = 'webhook_dead_letters_created_by_tablegate';
/** The gateway's own tables: never served, never described, never in a policy. */
export const OWN_TABLES: ReadonlySet<string> = new Set([
  USERS_TABLE,
  WEBHOOKS_TABLE,
  WEBHOOK_DEAD_LETTERS_TABLE,
]);
const everyRoutine = () => true;

const KIND_BY_DATA_TYPE: Readonly<Record<string, JsonKind>> = {
  tinyint: 'integer',
  smallint: 'integer',
  mediumint: 'integer',
  int: 'integer',
  integer: 'integer',
  bigint: 'integer',
  decimal: 'decimal',
  numeric: 'decimal',
  float: 'float',
  double: 'float',
  real: 'float',
  year: 'year',
  bit: 'bit',
  date: 'date',
  datetime: 'datetime',
  timestamp: 'datetime',
  json: 'json',
  binary: 'binary',
  varbinary: 'binary',
  tinyblob: 'binary',
  blob: 'binary',
  mediumblob: 'binary',
  longblob: 'binary',
};

function toNumber(value: string | number | null): number | null {
  return value === null ? null : Number(value);
}

/**
 * MariaDB reports a literal default as quoted text or a number, no default and a NULL one as SQL
 * NULL or 'NULL', an expression as its text (`current_timestamp()`); MySQL marks expressions
 * DEFAULT_GENERATED but shows literals unquoted, so only numbers and NULL count there.
 */
function isConstantDefault(value: string | null, extra: string): boolean {
  if (extra.includes('default_generated')) return false;
  return (
    value === null ||
    value === 'NULL' ||
    /^'(?:[^']|'')*'$/s.test(value) ||
    /^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i.test(value)
  );
}

export function columnFromRow(row: ColumnRow, jsonColumns: ReadonlySet<string>): ColumnInfo {
  const dataType = row.DATA_TYPE.toLowerCase();
  const extra = row.EXTRA.toLowerCase();
  const nullable = row.IS_NULLABLE === 'YES';
  const autoIncrement = extra.includes('auto_increment');
  // MySQL marks expression defaults DEFAULT_GENERATED; only VIRTUAL/STORED/PERSISTENT are generated columns.
  const generated = /\b(virtual|stored|persistent)\b/.test(extra);
  const isJson =
    dataType === 'json' || jsonColumns.has(`${row.TABLE_NAME}\u0000${row.COLUMN_NAME}`);
  return {
    name: row.COLUMN_NAME,
    dataType,
    columnType: row.COLUMN_TYPE,
    kind: isJson
      ? 'json'
      : (KIND_BY_DATA_TYPE[dataType] ?? (isSpatialType(dataType) ? 'geometry' : 'string')),
    nullable,
    unsigned: /\bunsigned\b/i.test(row.COLUMN_TYPE),
    autoIncrement,
    // MariaDB reports an explicit or implicit NULL default as the text 'NULL'; MySQL as SQL NULL.
    hasDefault: row.COLUMN_DEFAULT !== null || nullable || autoIncrement || generated,
    generated,
    constantDefault: isConstantDefault(row.COLUMN_DEFAULT, extra),
    maxLength: toNumber(row.CHARACTER_MAXIMUM_LENGTH),
    numericPrecision: toNumber(row.NUMERIC_PRECISION),
    numericScale: toNumber(row.NUMERIC_SCALE),
  };
}

/**
 * MariaDB's JSON is LONGTEXT with a `json_valid(col)` check; MySQL has a real JSON type.
 * Returns `table\0column` keys. MySQL's CHECK_CONSTRAINTS has no TABLE_NAME column, hence the catch.
 */
async function mariaDbJsonColumns(db: RowReader, database: string): Promise<Set<string>> {
  const keys = new Set<string>();
  try {
    const rows = await db.rows<{ TABLE_NAME: string; CHECK_CLAUSE: string }>({
      sql: 'SELECT TABLE_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = ?',
      params: [database],
    });
    for (const row of rows) {
      const match = /^json_valid\(`((?:[^`]|``)+)`\)$/i.exec(String(row.CHECK_CLAUSE).trim());
      if (match?.[1]) keys.add(`${row.TABLE_NAME}\u0000${match[1].replaceAll('``', '`')}`);
    }
  } catch {
    // Not MariaDB: JSON columns are found by their DATA_TYPE.
  }
  return keys;
}

/**
 * The SRID each spatial column declares (`table\0column` → SRID), read only when the schema has
 * spatial columns: MariaDB lists them in GEOMETRY_COLUMNS (REF_SYSTEM_ID, 0 when none), MySQL 8
 * in ST_GEOMETRY_COLUMNS (SRS_ID, NULL when none). Either may be missing: then none is known.
 */
async function spatialReferences(db: RowReader, database: string): Promise<Map<string, number>> {
  const srids = new Map<string, number>();
  const queries = [
    'SELECT G_TABLE_NAME, G_GEOMETRY_COLUMN, SRID FROM information_schema.GEOMETRY_COLUMNS WHERE G_TABLE_SCHEMA = ?',
    'SELECT TABLE_NAME, COLUMN_NAME, SRS_ID FROM information_schema.ST_GEOMETRY_COLUMNS WHERE TABLE_SCHEMA = ?',
  ];
  for (const sql of queries) {
    try {
      const rows = await db.rows<Record<string, unknown>>({ sql, params: [database] });
      for (const row of rows) {
        const [table, column, srid] = Object.values(row);
        if (srid !== null && srid !== undefined) {
          srids.set(`${String(table)}\u0000${String(column)}`, Number(srid));
        }
      }
      return srids;
    } catch {
      // Not this server's table: try the other one.
    }
  }
  return srids;
}

interface TableRow {
  TABLE_NAME: string;
  TABLE_TYPE: string;
  TABLE_ROWS: string | number | null;
}

interface UniqueKeyRow {
  TABLE_NAME: string;
  INDEX_NAME: string;
  COLUMN_NAME: string;
}

interface ForeignKeyRow {
  CONSTRAINT_NAME: string;
  TABLE_NAME: string;
  COLUMN_NAME: string;
  REFERENCED_TABLE_NAME: string;
  REFERENCED_COLUMN_NAME: string;
}

/** What readSchema reads from information_schema, as read: schemaSteps makes the tables of it. */
export interface SchemaRows {
  readonly tables: readonly TableRow[];
  readonly columns: readonly ColumnRow[];
  /** `table\0column` of MariaDB's JSON columns (LONGTEXT with a json_valid check). */
  readonly jsonColumns: ReadonlySet<string>;
  readonly withTriggers: ReadonlySet<string>;
  readonly readOnlyViews: ReadonlySet<string>;
  /** In table, constraint and column order. */
  readonly foreignKeys: readonly ForeignKeyRow[];
  /** In table, index and column order. */
  readonly uniqueKeys: readonly UniqueKeyRow[];
  /** `table\0column` → the SRID a spatial column declares. */
  readonly srids: ReadonlyMap<string, number>;
}

/** The information_schema rows of `database` the tables are made of. */
export async function readSchemaRows(db: RowReader, database: string): Promise<SchemaRows> {
  const tables = await db.rows<TableRow>({
    sql: 'SELECT TABLE_NAME, TABLE_TYPE, TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?',
    params: [database],
  });
  const columns = await db.rows<ColumnRow>({
    sql: `SELECT TABLE_NAME, COLUMN_NAME, COLUMN_DEFAULT, IS_NULLABLE, DATA_TYPE, COLUMN_TYPE,
            CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, COLUMN_KEY, EXTRA
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    params: [database],
  });
  const jsonColumns = await mariaDbJsonColumns(db, database);
  const triggerRows = await db.rows<{ EVENT_OBJECT_TABLE: string }>({
    sql: 'SELECT DISTINCT EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?',
    params: [database],
  });
  const viewRows = await db.rows<{ TABLE_NAME: string; IS_UPDATABLE: string }>({
    sql: 'SELECT TABLE_NAME, IS_UPDATABLE FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ?',
    params: [database],
  });
  const foreignKeys = await db.rows<ForeignKeyRow>({
    sql: `SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME
       FROM information_schema.KEY_COLUMN_USAGE
      WHERE TABLE_SCHEMA = ? AND REFERENCED_TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME IS NOT NULL
      ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`,
    params: [database, database],
  });
  const uniqueKeys = await db.rows<UniqueKeyRow>({
    sql: `SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
      WHERE TABLE_SCHEMA = ? AND NON_UNIQUE = 0 AND INDEX_NAME <> 'PRIMARY'
      ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
    params: [database],
  });
  const srids = (await runInSlices(anySpatial(columns)))
    ? await spatialReferences(db, database)
    : new Map<string, number>();
  return {
    tables,
    columns,
    jsonColumns,
    withTriggers: new Set(triggerRows.map((row) => String(row.EVENT_OBJECT_TABLE))),
    readOnlyViews: new Set(
      viewRows
        .filter((row) => String(row.IS_UPDATABLE).toUpperCase() !== 'YES')
        .map((row) => String(row.TABLE_NAME)),
    ),
    foreignKeys,
    uniqueKeys,
    srids,
  };
}

/**
 * Rows made into tables between two steps: a few hundred microseconds of work at most, so that
 * a slice (slices.ts) ends close to its time; a schema of ten tables is a handful of steps.
 */
const ROWS_PER_STEP = 100;

/** Whether a column is spatial (its SRID is then read), in steps as schemaSteps. */
function* anySpatial(columns: readonly ColumnRow[]): Generator<void, boolean> {
  let count = 0;
  for (const row of columns) {
    if (++count % ROWS_PER_STEP === 0) yield;
    if (isSpatialType(row.DATA_TYPE.toLowerCase())) return true;
  }
  return false;
}

/**
 * The tables `rows` describe, in steps (a pause every ROWS_PER_STEP rows, table or key): ten
 * thousand columns take tens of milliseconds to make, which the schema re-read runs in slices
 * (slices.ts) so that requests are answered meanwhile. Pure: the same rows give the same tables.
 */
export function* schemaSteps(rows: SchemaRows): Generator<void, Map<string, TableInfo>> {
  const columnsByTable = new Map<string, ColumnInfo[]>();
  const primaryKeys = new Map<string, string[]>();
  let count = 0;
  for (const row of rows.columns) {
    if (++count % ROWS_PER_STEP === 0) yield;
    const read = columnFromRow(row, rows.jsonColumns);
    const srid = rows.srids.get(`${row.TABLE_NAME}\u0000${row.COLUMN_NAME}`);
    const column = srid === undefined || read.kind !== 'geometry' ? read : { ...read, srid };
    let list = columnsByTable.get(row.TABLE_NAME);
    if (list === undefined) {
      list = [];
      columnsByTable.set(row.TABLE_NAME, list);
    }
    list.push(column);
    if (row.COLUMN_KEY === 'PRI') {
      let key = primaryKeys.get(row.TABLE_NAME);
      if (key === undefined) {
        key = [];
        primaryKeys.set(row.TABLE_NAME, key);
      }
      key.push(column.name);
    }
  }
  const uniqueKeys = yield* uniqueKeySteps(rows.uniqueKeys);
  const keys = yield* foreignKeySteps(rows.foreignKeys);
  const tables = new Map<string, TableInfo>();
  const relations = new Map<string, Map<string, Relation>>();
  for (const row of rows.tables) {
    if (++count % ROWS_PER_STEP === 0) yield;
    const name = String(row.TABLE_NAME);
    if (OWN_TABLES.has(name)) continue;
    const columns = columnsByTable.get(name) ?? [];
    const named = new Map<string, Relation>();
    relations.set(name, named);
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
      ...rowEstimate(row.TABLE_ROWS),
    });
  }
  yield* relationSteps(tables, relations, keys);
  return tables;
}

export async function readSchema(db: RowReader, database: string): Promise<Map<string, TableInfo>> {
  return runInSlices(schemaSteps(await readSchemaRows(db, database)));
}

/**
 * The storage engine's estimate of a table's rows (information_schema.TABLES.TABLE_ROWS, what the
 * read cost estimate multiplies: plan/read-cost.ts, docs/reading.md), or nothing when there is
 * none (a view).
 */
function rowEstimate(value: string | number | null): { rows?: number } {
  const rows = toNumber(value);
  return rows === null || !Number.isFinite(rows) || rows < 0 ? {} : { rows };
}

/**
 * The UNIQUE indexes other than the primary key, per table, each as its columns in index order
 * (by index name, so the order is the same on every read). A unique index over a prefix of a
 * column (`SUB_PART`) still makes the whole values unique: equal values have equal prefixes.
 */
function* uniqueKeySteps(rows: readonly UniqueKeyRow[]): Generator<void, Map<string, string[][]>> {
  const keys = new Map<string, Map<string, string[]>>();
  let count = 0;
  for (const row of rows) {
    if (++count % ROWS_PER_STEP === 0) yield;
    const table = String(row.TABLE_NAME);
    let byIndex = keys.get(table);
    if (byIndex === undefined) {
      byIndex = new Map();
      keys.set(table, byIndex);
    }
    const index = String(row.INDEX_NAME);
    let columns = byIndex.get(index);
    if (columns === undefined) {
      columns = [];
      byIndex.set(index, columns);
    }
    columns.push(String(row.COLUMN_NAME));
  }
  return new Map([...keys].map(([table, byIndex]) => [table, [...byIndex.values()]]));
}

/** The foreign keys within the database, each with its columns in key order. */
function* foreignKeySteps(rows: readonly ForeignKeyRow[]): Generator<void, ForeignKey[]> {
  const keys = new Map<string, ForeignKey & { columns: string[]; referencedColumns: string[] }>();
  let count = 0;
  for (const row of rows) {
    if (++count % ROWS_PER_STEP === 0) yield;
    const id = `${row.TABLE_NAME}\u0000${row.CONSTRAINT_NAME}`;
    let key = keys.get(id);
    if (key === undefined) {
      key = {
        name: String(row.CONSTRAINT_NAME),
        table: String(row.TABLE_NAME),
        columns: [],
        referencedTable: String(row.REFERENCED_TABLE_NAME),
        referencedColumns: [],
      };
      keys.set(id, key);
    }
    key.columns.push(String(row.COLUMN_NAME));
    key.referencedColumns.push(String(row.REFERENCED_COLUMN_NAME));
  }
  return [...keys.values()];
}

export class SchemaCache {
  private tables = new Map<string, TableInfo>();
  private routineSet: Routines = NO_ROUTINES;
  private lastRead = 0;
  private reading: Promise<void> | null = null;
  private reads = 0;
  /** schema-change.ts's fingerprint of the schema `tables` was read from; null when unknown. */
  private fingerprint: string | null = null;

  constructor(
    private readonly db: RowReader,
    private readonly database: string,
    private readonly refreshIntervalMs = 1000,
  ) {}

  get tableCount(): number {
    return this.tables.size;
  }

  /** How many of the served tables are base tables and how many views (the start-up line). */
  get counts(): { tables: number; views: number } {
    let views = 0;
    for (const table of this.tables.values()) if (table.kind === 'view') views++;
    return { tables: this.tables.size - views, views };
  }

  all(): Iterable<TableInfo> {
    return this.tables.values();
  }

  /** Whether the last read found the table (never re-reads: metrics ask on every request). */
  has(name: string): boolean {
    return this.tables.has(name);
  }

  /**
   * Changes whenever a read found the schema changed, so what is built from the tables can be
   * cached. A re-read that finds it unchanged keeps the tables (and their objects) as they were.
   */
  get version(): number {
    return this.reads;
  }

  /** Reads the schema now; concurrent callers share one read. */
  refresh(): Promise<void> {
    return this.read(false);
  }

  /**
   * Re-reads the schema if the last read is old enough. A read under way began before the caller
   * missed a name, so it may not hold a table created since: it is awaited, then the age checked.
   */
  async refreshIfStale(): Promise<void> {
    if (this.reading) await this.reading;
    if (Date.now() - this.lastRead >= this.refreshIntervalMs) await this.refresh();
  }

  /**
   * As refreshIfStale, but a read first asks MySQL for the schema's fingerprint and reads the
   * tables only when it changed: for callers that ask on every request (the API description).
   */
  async refreshIfChanged(): Promise<void> {
    if (this.reading) await this.reading;
    if (Date.now() - this.lastRead >= this.refreshIntervalMs) await this.read(true);
  }

  private read(onlyIfChanged: boolean): Promise<void> {
    this.reading ??= (async () => {
      // Taken first: a change while the tables are read makes the next check read them again.
      const fingerprint = await schemaFingerprint(this.db, this.database);
      if (!onlyIfChanged || fingerprint === null || fingerprint !== this.fingerprint) {
        const tables = await readSchema(this.db, this.database);
        const routines = await readRoutines(this.db, this.database, columnFromRow);
        // Each part is replaced only when it changed: what is cached by table object stays.
        const tablesChanged = !(await runInSlices(sameTableSteps(tables, this.tables)));
        const routinesChanged = !sameData(routines, this.routineSet);
        if (tablesChanged) this.tables = tables;
        if (routinesChanged) this.routineSet = routines;
        if (tablesChanged || routinesChanged) this.reads++;
      }
      this.fingerprint = fingerprint;
      this.lastRead = Date.now();
    })().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  /** The table, re-reading the schema once if it is unknown and the last read is old enough. */
  async find(name: string): Promise<TableInfo | undefined> {
    const known = this.tables.get(name);
    if (known || OWN_TABLES.has(name)) return known;
    await this.refreshIfStale();
    return this.tables.get(name);
  }

  /**
   * The table, or the 404 a request naming an unknown table answers with. A known table comes
   * back at once, not as a promise: every request asks.
   */
  require(name: string): TableInfo | Promise<TableInfo> {
    return this.tables.get(name) ?? this.requireAfterRead(name);
  }

  /**
   * The 404 of a table a caller may not know of (a policy hides it), after the wait a missing
   * table's 404 has (find: a re-read when the last one is old enough), so neither its bytes nor
   * its time tell it from a table that does not exist.
   */
  async refuse(name: string, visible: (table: TableInfo) => boolean): Promise<never> {
    if (!OWN_TABLES.has(name)) await this.refreshIfStale();
    throw this.unknown(name, visible);
  }

  /** The 404 of a table that is not there, its "did you mean" naming only tables `visible` keeps. */
  unknown(name: string, visible: (table: TableInfo) => boolean): ApiError {
    return unknownTable(name, this.names(visible));
  }

  /** The stored procedures and functions served (never re-reads). */
  get routines(): Routines {
    return this.routineSet;
  }

  /** The routine of that kind and name as last read, or undefined (never re-reads). */
  routine(kind: RoutineKind, name: string): RoutineInfo | undefined {
    return (kind === 'procedure' ? this.routineSet.procedures : this.routineSet.functions).get(
      name,
    );
  }

  /**
   * The procedure and function of that name, re-reading the schema once when there is neither
   * and the last read is old enough; the 404 of an unknown routine when there is still none, its
   * "did you mean" naming only routines `callable` keeps (the caller's role may call).
   */
  async requireRoutines(
    name: string,
    callable: (routine: string) => boolean = everyRoutine,
  ): Promise<NamedRoutines> {
    let found = this.routinesNamed(name);
    if (found === null) {
      await this.refreshIfStale();
      found = this.routinesNamed(name);
    }
    if (found === null) throw unknownRoutine(name, this.routineNames(callable));
    return found;
  }

  /**
   * The 404 of a routine a caller may not know of (a policy withholds it), after the wait a
   * missing routine's 404 has, as refuse() does for tables; its "did you mean" as requireRoutines'.
   */
  async refuseRoutine(name: string, callable: (routine: string) => boolean): Promise<never> {
    await this.refreshIfStale();
    throw unknownRoutine(name, this.routineNames(callable));
  }

  /** The names of the procedures and functions `callable` keeps: what a "did you mean" may suggest. */
  private routineNames(callable: (routine: string) => boolean): string[] {
    const { procedures, functions } = this.routineSet;
    const names = new Set([...procedures.keys(), ...functions.keys()]);
    return [...names].filter(callable);
  }

  private routinesNamed(name: string): NamedRoutines | null {
    const procedure = this.routineSet.procedures.get(name);
    const fn = this.routineSet.functions.get(name);
    if (procedure !== undefined)
      return fn === undefined ? { procedure } : { procedure, function: fn };
    return fn === undefined ? null : { function: fn };
  }

  private async requireAfterRead(name: string): Promise<TableInfo> {
    const table = await this.find(name);
    if (!table)
      throw unknownTable(
        name,
        this.names(() => true),
      );
    return table;
  }

  /** The names of the tables `visible` keeps: what a "did you mean" may suggest. */
  private names(visible: (table: TableInfo) => boolean): string[] {
    const names: string[] = [];
    for (const table of this.tables.values()) if (visible(table)) names.push(table.name);
    return names;
  }

  /**
   * Resolves a request against the table: `plan(table)`. When it names a column the cache does
   * not know, the schema is re-read (at most once a second) and the plan made again, so a column
   * added after start is served on first use, like a new table.
   */
  plan<T>(
    table: TableInfo,
    plan: (table: TableInfo) => T,
  ): { table: TableInfo; plan: T } | Promise<{ table: TableInfo; plan: T }> {
    // The usual case answers at once; only a schema miss waits for a re-read. Callers await it.
    try {
      return { table, plan: plan(table) };
    } catch (error) {
      if (!(error instanceof ApiError) || !error.schemaMiss) throw error;
      return this.planAfterRead(table, plan, error);
    }
  }

  private async planAfterRead<T>(
    table: TableInfo,
    plan: (table: TableInfo) => T,
    error: ApiError,
  ): Promise<{ table: TableInfo; plan: T }> {
    await this.refreshIfStale();
    const fresh = await this.require(table.name);
    if (fresh === table) throw error;
    return { table: fresh, plan: plan(fresh) };
  }
}
