/**
 * How the schema cache (schema.ts) tells that the schema did not change, so that what was built
 * from it — plans, compiled reads, API descriptions — stays valid across a re-read:
 * `schemaFingerprint` asks MySQL for one row of checksums over the information_schema rows
 * readSchema reads (an unchanged schema then costs one statement instead of a full read), and
 * `sameData` compares a re-read with the tables held.
 */

import { ApiError } from '../errors.js';
import { runAtOnce } from '../slices.js';
import type { RowReader } from './pool.js';
import type { TableInfo } from './schema-types.js';

/**
 * `COUNT:SUM` over `rows` of the first 60 bits of each row's MD5: exact (a DECIMAL sum of
 * BIGINTs) and changed by any change to any listed value. QUOTE keeps NULL apart from 'NULL'.
 */
function checksum(table: string, values: readonly string[], where: string): string {
  const row = `CONCAT_WS('|', ${values.map((value) => `QUOTE(${value})`).join(', ')})`;
  return `(SELECT CONCAT(COUNT(*), ':', COALESCE(SUM(CAST(CONV(LEFT(MD5(${row}), 15), 16, 10) AS UNSIGNED)), 0))
     FROM information_schema.${table} WHERE ${where} = ?)`;
}

// Every information_schema table and column readSchema and readRoutines (routines.ts) read:
// reading more there means adding it here, or a change to it would go unseen until a full
// re-read. A routine's visibility follows the user's grants on it, so a routine granted or
// revoked moves this too; grants on the whole database do not (SHOW GRANTS is no SELECT), and
// are seen at the next full read (an unknown name asks for one).
const FINGERPRINT_SQL = `SELECT CONCAT_WS(' ',
  ${checksum('TABLES', ['TABLE_NAME', 'TABLE_TYPE'], 'TABLE_SCHEMA')},
  ${checksum(
    'COLUMNS',
    [
      'TABLE_NAME',
      'COLUMN_NAME',
      'ORDINAL_POSITION',
      'COLUMN_DEFAULT',
      'IS_NULLABLE',
      'DATA_TYPE',
      'COLUMN_TYPE',
      'CHARACTER_MAXIMUM_LENGTH',
      'NUMERIC_PRECISION',
      'NUMERIC_SCALE',
      'COLUMN_KEY',
      'EXTRA',
    ],
    'TABLE_SCHEMA',
  )},
  ${checksum('VIEWS', ['TABLE_NAME', 'IS_UPDATABLE'], 'TABLE_SCHEMA')},
  ${checksum('TRIGGERS', ['TRIGGER_NAME', 'EVENT_OBJECT_TABLE'], 'TRIGGER_SCHEMA')},
  ${checksum(
    'STATISTICS',
    ['TABLE_NAME', 'INDEX_NAME', 'NON_UNIQUE', 'SEQ_IN_INDEX', 'COLUMN_NAME'],
    'TABLE_SCHEMA',
  )},
  ${checksum('CHECK_CONSTRAINTS', ['CONSTRAINT_NAME', 'CHECK_CLAUSE'], 'CONSTRAINT_SCHEMA')},
  ${checksum(
    'KEY_COLUMN_USAGE',
    [
      'CONSTRAINT_NAME',
      'TABLE_NAME',
      'COLUMN_NAME',
      'ORDINAL_POSITION',
      'REFERENCED_TABLE_SCHEMA',
      'REFERENCED_TABLE_NAME',
      'REFERENCED_COLUMN_NAME',
    ],
    'TABLE_SCHEMA',
  )},
  ${checksum('ROUTINES', ['ROUTINE_NAME', 'ROUTINE_TYPE', 'ROUTINE_COMMENT'], 'ROUTINE_SCHEMA')},
  ${checksum(
    'PARAMETERS',
    [
      'SPECIFIC_NAME',
      'ROUTINE_TYPE',
      'ORDINAL_POSITION',
      'PARAMETER_MODE',
      'PARAMETER_NAME',
      'DATA_TYPE',
      'DTD_IDENTIFIER',
      'CHARACTER_MAXIMUM_LENGTH',
      'NUMERIC_PRECISION',
      'NUMERIC_SCALE',
    ],
    'SPECIFIC_SCHEMA',
  )}
) AS fingerprint`;

/** One `?` per checksum: the database each counts in. */
const FINGERPRINT_PARAMS = FINGERPRINT_SQL.match(/= \?\)/g) ?? [];

/**
 * One string that changes whenever the schema of `database` does; null when the server refuses
 * the statement (MySQL 5.7 has no CHECK_CONSTRAINTS), and then every re-read is a full one.
 * MySQL unavailable, busy or too slow is thrown, as the full read would throw it.
 */
export async function schemaFingerprint(db: RowReader, database: string): Promise<string | null> {
  try {
    const [row] = await db.rows<{ fingerprint: string | null }>({
      sql: FINGERPRINT_SQL,
      params: FINGERPRINT_PARAMS.map(() => database),
    });
    return row?.fingerprint ?? null;
  } catch (error) {
    if (error instanceof ApiError && error.status >= 503) throw error;
    return null;
  }
}

/**
 * Whether two reads of the schema found the same tables. A relation points at its target table
 * object (so tables refer to each other, in cycles): it is compared by the names it links. Table
 * by table, stopping at the first difference: a schema of thousands of tables that gained one
 * is told apart at once, not after every table was copied and compared.
 */
export function sameTables(
  a: ReadonlyMap<string, TableInfo>,
  b: ReadonlyMap<string, TableInfo>,
): boolean {
  return runAtOnce(sameTableSteps(a, b));
}

/** Tables compared between two steps of sameTableSteps. */
const TABLES_PER_STEP = 20;

/**
 * sameTables in steps, a pause every TABLES_PER_STEP tables: comparing thousands of equal tables
 * takes tens of milliseconds, which the schema re-read (schema.ts) runs in slices.
 */
export function* sameTableSteps(
  a: ReadonlyMap<string, TableInfo>,
  b: ReadonlyMap<string, TableInfo>,
): Generator<void, boolean> {
  if (a.size !== b.size) return false;
  let count = 0;
  for (const [name, table] of a) {
    if (++count % TABLES_PER_STEP === 0) yield;
    const other = b.get(name);
    if (other === undefined || !sameData(plainTable(table), plainTable(other))) return false;
  }
  return true;
}

function plainTable(table: TableInfo): unknown {
  const relations = [...table.relations.values()].map((relation) => ({
    name: relation.name,
    kind: relation.kind,
    key: relation.key,
    target: relation.target.name,
    on: relation.on.map(({ local, remote }) => [local.name, remote.name]),
  }));
  // A row count is a statistic, not schema: its drift alone is no change (schema-types.ts).
  const { rows: _rows, ...shape } = table;
  return { ...shape, relations };
}

/** Deep equality of plain data: primitives, arrays, Maps and plain objects. */
export function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameData(item, b[i]));
  }
  if (a instanceof Map) {
    if (!(b instanceof Map) || a.size !== b.size) return false;
    for (const [key, value] of a) {
      if (!b.has(key) || !sameData(value, b.get(key))) return false;
    }
    return true;
  }
  if (Array.isArray(b) || b instanceof Map) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every(
    (key) =>
      Object.hasOwn(b, key) &&
      sameData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}
