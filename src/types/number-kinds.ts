/**
 * The numeric column kinds (docs/types.md): integers (BIGINT a string beyond ±2^53), DECIMAL
 * with exactly its stored digits, FLOAT/DOUBLE, YEAR and BIT(n) as numbers.
 */
import type { ColumnInfo } from '../db/schema-types.js';
import { type ColumnKind, keptKey } from './column-kind.js';
import { bitCell, finite } from './csv-text.js';
import {
  bitEdm,
  decimalEdm,
  decimalValue,
  floatEdm,
  integerEdm,
  integerValue,
  sameValue,
} from './edm.js';
import { unquoted, writeBit, writeDouble, writeFloat32, writeInteger } from './json-text.js';
import { integerKeyValue, integerParameter, textKeyValue } from './seek-values.js';
import { bitBytes, bitText, decimalText, floatValue, integerText } from './write-values.js';

/** Signed ranges of the integer types below BIGINT (MySQL manual, "Integer Types"). */
const INTEGER_BITS: Readonly<Record<string, number>> = {
  tinyint: 8,
  smallint: 16,
  mediumint: 24,
  int: 32,
  integer: 32,
};

const INTEGER_TEXT_PATTERN = '^-?[0-9]+$';

/** DECIMAL text as MySQL writes it. */
const DECIMAL_TEXT = /^-?[0-9]+(?:\.[0-9]+)?$/;

/** A whole number from information_schema within bounds, else the fallback. */
function bounded(value: number | null, min: number, max: number, fallback: number): number {
  return value !== null && Number.isInteger(value) && value >= min && value <= max
    ? value
    : fallback;
}

/** Whole numbers: a JSON number while it is safe, else the exact text. */
function writeWhole(_column: ColumnInfo, value: unknown, where: string): string | number {
  const text = integerText(value, where);
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text;
}

/** What every numeric kind has alike: stored exactly once coerced, compared as numbers. */
const NUMERIC: Pick<
  ColumnKind,
  | 'readSql'
  | 'takesObjects'
  | 'storesExactly'
  | 'filterType'
  | 'filterable'
  | 'sortsByNumber'
  | 'seekPlaceholder'
  | 'storedKey'
> = {
  readSql: (ref) => ref,
  takesObjects: false,
  storesExactly: () => true,
  filterType: () => 'number',
  filterable: true,
  sortsByNumber: () => false,
  seekPlaceholder: () => '?',
  // A number is converted to the column's type.
  storedKey: keptKey,
};

export const integerKind: ColumnKind = {
  edm: {
    type: integerEdm,
    value: (column, ieee754) => integerValue(integerEdm(column), ieee754),
    body: null,
  },
  ...NUMERIC,
  // Integers short of BIGINT are exact as JSON numbers.
  tokenSql: (ref, column) => (column.dataType === 'bigint' ? `CAST(${ref} AS CHAR)` : ref),
  json: () => writeInteger,
  // An exact JSON number, or BIGINT as text.
  jsonToken: (column) =>
    column.dataType === 'bigint' ? (t) => writeInteger(unquoted(t as string)) : (t) => t as string,
  // Digits and a sign: never quoted.
  csv: () => String,
  schema: (column) => {
    const type = column.columnType;
    if (column.dataType === 'bigint') {
      return {
        type: ['integer', 'string'],
        ...(column.unsigned ? { minimum: 0 } : {}),
        pattern: INTEGER_TEXT_PATTERN,
        description: `${type}; a string beyond ±2^53`,
      };
    }
    const bits = INTEGER_BITS[column.dataType] ?? 32;
    const [minimum, maximum] = column.unsigned
      ? [0, 2 ** bits - 1]
      : [-(2 ** (bits - 1)), 2 ** (bits - 1) - 1];
    return { type: 'integer', minimum, maximum, description: type };
  },
  write: writeWhole,
  key: (_column, given, _text, where) => ({ kind: 'number', text: integerText(given, where) }),
  notAKey: null,
  keyIsExact: () => false,
  castTarget: (column) => (column.unsigned ? 'UNSIGNED' : 'SIGNED'),
  seekable: () => true,
  seekValue: integerKeyValue,
  seekParameter: (column, value) => integerParameter(value, column.unsigned),
  keyAsNumber: true,
  rowImageKey: true,
  userIndex: () => 'integer',
  userEquals: 'integer',
  policyEquals: true,
  aggregates: 'sum',
  sumType: 'integer',
  width: 'fixed',
};

export const decimalKind: ColumnKind = {
  edm: { type: decimalEdm, value: decimalValue, body: null },
  ...NUMERIC,
  tokenSql: (ref) => `CAST(${ref} AS CHAR)`,
  // The server's DECIMAL text ("-12.50") is already a valid JSON number with the stored digits.
  json: () => String,
  jsonToken: () => (t) => unquoted(t as string),
  csv: () => String,
  schema: (column) => ({
    type: 'number',
    description: `${column.columnType}; exactly the stored digits`,
  }),
  write: (column, value, where) => decimalText(value, column, where, true),
  key: (column, given, _text, where) => ({
    kind: 'number',
    text: decimalText(given, column, where, false),
  }),
  notAKey: null,
  keyIsExact: () => false,
  castTarget: (column) => {
    const precision = bounded(column.numericPrecision, 1, 65, 65);
    const scale = bounded(column.numericScale, 0, Math.min(38, precision), 0);
    return `DECIMAL(${precision},${scale})`;
  },
  seekable: () => true,
  seekPlaceholder: (column) => {
    // The column's own precision holds every value it stores (DECIMAL(65,30) would not hold
    // a DECIMAL(65,0)'s 65 integer digits).
    const precision = column.numericPrecision;
    const scale = column.numericScale;
    return Number.isInteger(precision) && Number.isInteger(scale)
      ? `CAST(? AS DECIMAL(${precision},${scale}))`
      : 'CAST(? AS DECIMAL(65,30))';
  },
  seekValue: textKeyValue,
  seekParameter: (_column, value) =>
    typeof value === 'string' && DECIMAL_TEXT.test(value) ? value : undefined,
  keyAsNumber: true,
  rowImageKey: false,
  userIndex: () => null,
  userEquals: null,
  policyEquals: true,
  aggregates: 'sum',
  sumType: 'decimal',
  width: 'fixed',
};

/** FLOAT is written as the shortest text of its single-precision value, DOUBLE as a double. */
const floatWriter = (column: ColumnInfo) =>
  column.dataType === 'float' ? writeFloat32 : writeDouble;

export const floatKind: ColumnKind = {
  edm: { type: floatEdm, value: sameValue, body: null },
  ...NUMERIC,
  // FLOAT's own text has 6 digits; as a double it is the exact value the driver reads.
  tokenSql: (ref, column) =>
    column.dataType === 'float' ? `CAST(${ref} + 0e0 AS CHAR)` : `CAST(${ref} AS CHAR)`,
  json: floatWriter,
  jsonToken: (column) => {
    const write = floatWriter(column);
    return (t) => write(Number(unquoted(t as string)));
  },
  csv: (column) =>
    column.dataType === 'float'
      ? (value) => finite(writeFloat32(value))
      : (value) => (Number.isFinite(Number(value)) ? String(Number(value)) : ''),
  schema: (column) => ({ type: 'number', description: column.columnType }),
  write: (_column, value, where) => floatValue(value, where),
  key: (_column, given, _text, where) => ({ kind: 'value', value: floatValue(given, where) }),
  notAKey: null,
  keyIsExact: () => true,
  // A DOUBLE in the variable already, written as the declared type says.
  castTarget: () => null,
  seekable: () => true,
  seekValue: (_column, value) => Number(value),
  seekParameter: (_column, value) =>
    typeof value === 'number' && Number.isFinite(value) ? value : undefined,
  keyAsNumber: false,
  rowImageKey: false,
  userIndex: () => null,
  userEquals: null,
  // Equal parameters need not compare equal once stored (a FLOAT keeps fewer digits).
  policyEquals: false,
  aggregates: 'sum',
  sumType: 'double',
  width: 'fixed',
};

export const yearKind: ColumnKind = {
  edm: { type: () => ({ name: 'Edm.Int16' }), value: sameValue, body: null },
  ...NUMERIC,
  tokenSql: (ref) => ref,
  json: () => String,
  jsonToken: () => (t) => t as string,
  csv: () => String,
  schema: (column) => ({ type: 'integer', description: column.columnType }),
  write: writeWhole,
  key: integerKind.key,
  notAKey: null,
  keyIsExact: () => false,
  castTarget: () => null,
  seekable: () => true,
  seekValue: integerKeyValue,
  seekParameter: (column, value) => integerParameter(value, column.unsigned),
  keyAsNumber: true,
  rowImageKey: false,
  userIndex: () => null,
  userEquals: 'integer',
  policyEquals: true,
  aggregates: 'order',
  sumType: 'integer',
  width: 'fixed',
};

export const bitKind: ColumnKind = {
  edm: {
    type: bitEdm,
    value: (column, ieee754) => integerValue(bitEdm(column), ieee754),
    body: null,
  },
  ...NUMERIC,
  tokenSql: (ref) => `CAST(${ref} + 0 AS CHAR)`,
  json: () => writeBit,
  jsonToken: () => (t) => writeInteger(unquoted(t as string)),
  csv: () => bitCell,
  schema: (column) => ({ type: 'integer', minimum: 0, description: column.columnType }),
  write: (_column, value, where) => bitBytes(bitText(value, where)),
  key: (_column, given, _text, where) => ({ kind: 'number', text: bitText(given, where) }),
  notAKey: null,
  keyIsExact: () => false,
  castTarget: () => null,
  seekable: () => true,
  seekValue: integerKeyValue,
  seekParameter: (_column, value) => integerParameter(value, true),
  keyAsNumber: false,
  rowImageKey: false,
  userIndex: () => null,
  userEquals: null,
  policyEquals: true,
  aggregates: 'order',
  sumType: 'integer',
  width: 'fixed',
};
