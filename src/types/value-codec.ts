/**
 * JSON value → the MySQL parameter that stores it exactly as sent: the inverse of rows.ts
 * (docs/types.md). A value MySQL would round or reinterpret without an error even in strict mode
 * (1.5 into an INT, 1.005 into DECIMAL(10,2), a JSON number that already lost digits in
 * JSON.parse) is refused here. Also the exact form of an update/delete key value. Each kind's
 * rules are its entry's (types/kinds.ts, the checks in types/write-values.ts).
 */

import type { ColumnInfo } from '../db/schema-types.js';
import { invalidValue } from '../errors.js';
import type { KeyOperand, WriteParam } from './column-kind.js';
import { COLUMN_KINDS } from './kinds.js';
import { describeValue } from './write-values.js';

export type { KeyOperand, WriteParam } from './column-kind.js';
export { describeValue } from './write-values.js';

/** Where a value goes, for messages: `Column 'x'` or `Row 3, column 'x'`. */
function valueWhere(column: ColumnInfo, rowNumber: number | null): string {
  return rowNumber === null
    ? `Column '${column.name}'`
    : `Row ${rowNumber}, column '${column.name}'`;
}

/**
 * A JSON value → the parameter that stores it in `column`. null is SQL NULL in every column
 * (also a JSON column). Booleans are 1/0 (MySQL's TRUE and FALSE), objects and arrays go only
 * into JSON columns, binary columns take base64 text. Numeric columns also take numeric strings,
 * the only exact form for values JSON numbers cannot hold (BIGINT beyond 2^53, long DECIMALs).
 */
export function coerceValue(
  column: ColumnInfo,
  value: unknown,
  rowNumber: number | null = null,
): WriteParam {
  if (value === null) return null;
  const where = valueWhere(column, rowNumber);
  const kind = COLUMN_KINDS[column.kind];
  if (typeof value === 'object' && !kind.takesObjects) {
    throw invalidValue(
      `${where} takes a single value, not ${describeValue(value)}; objects and arrays go only into JSON columns`,
    );
  }
  return kind.write(column, value, where);
}

/**
 * The exact form of a key value for `column` (not JSON: the planner refuses JSON keys).
 * `given` is what a JSON body would have carried, `text` the value as written in the path.
 */
export function encodeKey(column: ColumnInfo, given: unknown, text: string): KeyOperand {
  const where = `The key value for column '${column.name}'`; // as valueWhere says it for bodies
  return COLUMN_KINDS[column.kind].key(column, given, text, where);
}
