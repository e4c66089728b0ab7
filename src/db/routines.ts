/**
 * The stored procedures and functions of the served database that the gateway's MySQL user may
 * execute (docs/routines.md), read from information_schema.ROUTINES and PARAMETERS with the rest
 * of the schema (schema.ts) and re-read with it. Each parameter, and a function's return value,
 * is described as a column is (schema-types.ts), so the value codecs that write and read columns
 * serve routines as they are.
 */

import { runInSlices } from '../slices.js';
import { mapDbError } from './errors.js';
import type { RowReader } from './pool.js';
import {
  EVERYTHING,
  type ExecuteGrants,
  executeGrants,
  type RoutineKind,
} from './routine-grants.js';
import type { ColumnInfo, ColumnRow } from './schema-types.js';

export type { RoutineKind } from './routine-grants.js';

export type ParameterMode = 'in' | 'out' | 'inout';

export interface ParameterInfo {
  readonly name: string;
  readonly mode: ParameterMode;
  /** Its type as a column's: name, data type, declared type (`decimal(10,2)`), kind. */
  readonly column: ColumnInfo;
}

export interface RoutineInfo {
  /** As information_schema spells it (MySQL matches routine names in any case). */
  readonly name: string;
  readonly kind: RoutineKind;
  /** In declaration order. */
  readonly parameters: readonly ParameterInfo[];
  /** A function's return value, as a column named `value`; null for a procedure. */
  readonly returns: ColumnInfo | null;
  /** ROUTINE_COMMENT: the description the routine's author gave it ('' for none). */
  readonly comment: string;
}

/** The routines of the database by name; a procedure and a function may share one. */
export interface Routines {
  readonly procedures: ReadonlyMap<string, RoutineInfo>;
  readonly functions: ReadonlyMap<string, RoutineInfo>;
}

export const NO_ROUTINES: Routines = { procedures: new Map(), functions: new Map() };

/** What one name stands for: a procedure, a function, or both (MySQL keeps them apart). */
export type NamedRoutines =
  | { readonly procedure: RoutineInfo; readonly function?: RoutineInfo }
  | { readonly procedure?: undefined; readonly function: RoutineInfo };

/**
 * Builds a column from a COLUMNS-shaped row: the schema reader's columnFromRow, handed in (the
 * reader imports this module, not the other way).
 */
export type ColumnBuilder = (row: ColumnRow, jsonColumns: ReadonlySet<string>) => ColumnInfo;

interface RoutineRow {
  ROUTINE_NAME: string;
  ROUTINE_TYPE: string;
  ROUTINE_COMMENT: string | null;
}

interface ParameterRow {
  SPECIFIC_NAME: string;
  ROUTINE_TYPE: string;
  ORDINAL_POSITION: string | number;
  PARAMETER_MODE: string | null;
  PARAMETER_NAME: string | null;
  DATA_TYPE: string;
  DTD_IDENTIFIER: string;
  CHARACTER_MAXIMUM_LENGTH: string | number | null;
  NUMERIC_PRECISION: string | number | null;
  NUMERIC_SCALE: string | number | null;
}

/**
 * Spatial types: a routine's arguments and results are not converted to and from GeoJSON as a
 * table's columns are (db/geometry.ts), so a routine with such a parameter or result is not
 * served (docs/routines.md) rather than answering 500 for every call.
 */
const UNSUPPORTED_TYPES: ReadonlySet<string> = new Set([
  'geometry',
  'point',
  'linestring',
  'polygon',
  'multipoint',
  'multilinestring',
  'multipolygon',
  'geometrycollection',
  'geomcollection',
]);

const NO_JSON: ReadonlySet<string> = new Set();

function columnOf(row: ParameterRow, name: string, build: ColumnBuilder): ColumnInfo {
  return build(
    {
      TABLE_NAME: row.SPECIFIC_NAME,
      COLUMN_NAME: name,
      COLUMN_DEFAULT: null,
      // Any parameter may be NULL.
      IS_NULLABLE: 'YES',
      DATA_TYPE: row.DATA_TYPE,
      // `decimal(10,2)`, `datetime(3)`, `enum('a','b')`, `bigint(20) unsigned`: a COLUMN_TYPE's shape.
      COLUMN_TYPE: row.DTD_IDENTIFIER,
      CHARACTER_MAXIMUM_LENGTH: row.CHARACTER_MAXIMUM_LENGTH,
      NUMERIC_PRECISION: row.NUMERIC_PRECISION,
      NUMERIC_SCALE: row.NUMERIC_SCALE,
      COLUMN_KEY: '',
      EXTRA: '',
    },
    NO_JSON,
  );
}

const MODES: Readonly<Record<string, ParameterMode>> = { IN: 'in', OUT: 'out', INOUT: 'inout' };

/** The routine from its parameter rows; null when one of its types cannot be served. */
function routineOf(
  name: string,
  kind: RoutineKind,
  rows: readonly ParameterRow[],
  comment: string,
  build: ColumnBuilder,
): RoutineInfo | null {
  const parameters: ParameterInfo[] = [];
  let returns: ColumnInfo | null = null;
  for (const row of rows) {
    if (UNSUPPORTED_TYPES.has(String(row.DATA_TYPE).toLowerCase())) return null;
    if (Number(row.ORDINAL_POSITION) === 0) {
      returns = columnOf(row, 'value', build);
      continue;
    }
    const mode = MODES[String(row.PARAMETER_MODE ?? 'IN').toUpperCase()] ?? 'in';
    const parameterName = String(row.PARAMETER_NAME);
    parameters.push({ name: parameterName, mode, column: columnOf(row, parameterName, build) });
  }
  if (kind === 'function' && returns === null) return null;
  return { name, kind, parameters, returns, comment };
}

/** The user's own grants; when the server will not show them, every routine it lists counts. */
async function readGrants(db: RowReader, database: string): Promise<ExecuteGrants> {
  try {
    const rows = await db.rows<Record<string, unknown>>({ sql: 'SHOW GRANTS', params: [] });
    return executeGrants(
      rows.map((row) => String(Object.values(row)[0])),
      database,
    );
  } catch (error) {
    if (mapDbError(error).status >= 503) throw error;
    return EVERYTHING;
  }
}

/**
 * The routines of `database` the user may execute. `build` makes a column from a COLUMNS-shaped
 * row (schema.ts columnFromRow).
 */
export async function readRoutines(
  db: RowReader,
  database: string,
  build: ColumnBuilder,
): Promise<Routines> {
  const routineRows = await db.rows<RoutineRow>({
    sql: `SELECT ROUTINE_NAME, ROUTINE_TYPE, ROUTINE_COMMENT
       FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? ORDER BY ROUTINE_NAME`,
    params: [database],
  });
  if (routineRows.length === 0) return NO_ROUTINES;
  const parameterRows = await db.rows<ParameterRow>({
    sql: `SELECT SPECIFIC_NAME, ROUTINE_TYPE, ORDINAL_POSITION, PARAMETER_MODE, PARAMETER_NAME,
            DATA_TYPE, DTD_IDENTIFIER, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE
       FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA = ?
      ORDER BY SPECIFIC_NAME, ROUTINE_TYPE, ORDINAL_POSITION`,
    params: [database],
  });
  const grants = await readGrants(db, database);
  return runInSlices(routineSteps(routineRows, parameterRows, grants, build));
}

/** Rows made into routines between two steps of routineSteps. */
const ROWS_PER_STEP = 100;

/**
 * The routines the rows describe that `grants` let the user execute, in steps (a pause every
 * ROWS_PER_STEP rows): a database of a thousand routines takes milliseconds to make, which the
 * schema re-read runs in slices (slices.ts).
 */
function* routineSteps(
  routineRows: readonly RoutineRow[],
  parameterRows: readonly ParameterRow[],
  grants: ExecuteGrants,
  build: ColumnBuilder,
): Generator<void, Routines> {
  const parameters = new Map<string, ParameterRow[]>();
  let count = 0;
  for (const row of parameterRows) {
    if (++count % ROWS_PER_STEP === 0) yield;
    // `kind name` → the parameter rows of that routine, in order.
    const key = `${String(row.ROUTINE_TYPE).toLowerCase()} ${row.SPECIFIC_NAME}`;
    let list = parameters.get(key);
    if (list === undefined) {
      list = [];
      parameters.set(key, list);
    }
    list.push(row);
  }
  const procedures = new Map<string, RoutineInfo>();
  const functions = new Map<string, RoutineInfo>();
  for (const row of routineRows) {
    if (++count % ROWS_PER_STEP === 0) yield;
    const type = String(row.ROUTINE_TYPE).toLowerCase();
    if (type !== 'procedure' && type !== 'function') continue; // MariaDB's packages
    const name = String(row.ROUTINE_NAME);
    if (!grants.may(type, name)) continue;
    const routine = routineOf(
      name,
      type,
      parameters.get(`${type} ${name}`) ?? [],
      String(row.ROUTINE_COMMENT ?? ''),
      build,
    );
    if (routine !== null) (type === 'procedure' ? procedures : functions).set(name, routine);
  }
  return { procedures, functions };
}

/** Both kinds, procedures first, each by name. */
export function allRoutines(routines: Routines): RoutineInfo[] {
  return [...routines.procedures.values(), ...routines.functions.values()];
}
