/**
 * The column-type registry: every column kind (db/schema-types.ts JsonKind) and what the
 * gateway does with its values (column-kind.ts), one entry per kind. A new column type is an
 * entry here (in its family's file) and its data types' mapping to the kind (db/schema.ts
 * KIND_BY_DATA_TYPE, db/result-columns.ts WIRE_TYPES); a new target is a field of ColumnKind.
 */
import type { JsonKind } from '../db/schema-types.js';
import type { ColumnKind } from './column-kind.js';
import { geometryKind } from './geometry-kind.js';
import { bitKind, decimalKind, floatKind, integerKind, yearKind } from './number-kinds.js';
import { binaryKind, jsonKind, stringKind } from './text-kinds.js';
import { dateKind, datetimeKind } from './time-kinds.js';

export const COLUMN_KINDS: Readonly<Record<JsonKind, ColumnKind>> = {
  integer: integerKind,
  decimal: decimalKind,
  float: floatKind,
  year: yearKind,
  bit: bitKind,
  date: dateKind,
  datetime: datetimeKind,
  string: stringKind,
  json: jsonKind,
  binary: binaryKind,
  geometry: geometryKind,
};
