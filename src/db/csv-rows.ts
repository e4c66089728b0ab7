/**
 * MySQL value → one CSV field (RFC 4180), for reads answered as `text/csv` (docs/reading.md):
 * the values the JSON serializer writes (rows.ts, docs/types.md) as text — numbers with the same
 * digits, dates and times as stored with their column's fractional digits, binary as base64, a JSON column's JSON text, a spatial
 * column's GeoJSON — and NULL as
 * an empty field, told from an empty string, which is written `""`. An expanded relation's
 * cell holds its JSON (the object, `null`, or the array), exactly what the JSON answer holds
 * under that key. A field with a comma, a quote, CR or LF is quoted, its quotes doubled.
 * Text that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab or CR first) gets a
 * `'` in front unless `--csv-formulas keep` (docs/reading.md). Built once per row shape, like
 * the JSON serializer.
 */
import { wkbToGeoJson } from './geometry.js';
import {
  type Field,
  type RowSerializer,
  shapeSerializer,
  temporalText,
  writeFloat32,
} from './rows.js';
import type { ColumnInfo } from './schema-types.js';

type CellWriter = (value: unknown) => string;

/**
 * `--csv-formulas` (docs/configuration.md): `escape`, the default, writes a text cell that a
 * spreadsheet would take for a formula with a `'` in front (OWASP's advice on CSV injection);
 * `keep` writes it as it is.
 */
export type CsvFormulas = 'escape' | 'keep';

const NEEDS_QUOTES = /[",\r\n]/;

/** A text as one CSV field: as it is, or quoted when it holds a comma, a quote, CR or LF. */
export function csvField(text: string): string {
  if (text === '') return '""';
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A number's text as JSON writes it, or an empty field for what JSON writes as null. */
function finite(text: string): string {
  return text === 'null' ? '' : text;
}

/** Bytes as base64; none as `""`, an empty value, not NULL. */
function base64(value: Buffer): string {
  return value.length === 0 ? '""' : value.toString('base64');
}

function text(value: unknown): string {
  if (typeof value === 'string') return csvField(value);
  if (Buffer.isBuffer(value)) return base64(value);
  return csvField(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/**
 * Whether Excel, LibreOffice or Google Sheets would read a cell starting so as a formula: `=`,
 * `+`, `-`, `@`, or a tab or CR (which they may drop before looking), as OWASP lists them.
 */
function startsFormula(text: string): boolean {
  const first = text.charCodeAt(0);
  // = + - @ TAB CR
  return (
    first === 61 || first === 43 || first === 45 || first === 64 || first === 9 || first === 13
  );
}

/** A text column's cell, `'` in front of what would be a formula (quoted as RFC 4180 needs). */
function safeText(value: unknown): string {
  return typeof value === 'string' && startsFormula(value) ? csvField(`'${value}`) : text(value);
}

/** A JSON number: the only JSON text that starts with one of startsFormula's characters. */
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A JSON column's cell: as text, but a JSON number (`-5`) is a number to a spreadsheet too and
 * stays as it is; anything else starting so (MariaDB keeps a JSON column's text as written,
 * leading white space and all) gets its `'`.
 */
function safeJson(value: unknown): string {
  return typeof value === 'string' && startsFormula(value) && !JSON_NUMBER.test(value)
    ? csvField(`'${value}`)
    : text(value);
}

/** BIT(n) arrives as big-endian bytes. */
function bitText(value: unknown): string {
  if (!Buffer.isBuffer(value)) return String(value);
  let n = 0n;
  for (const byte of value) n = (n << 8n) | BigInt(byte);
  return String(n);
}

function cellWriterFor(column: ColumnInfo, formulas: CsvFormulas): CellWriter {
  switch (column.kind) {
    case 'integer':
    case 'decimal':
    case 'year':
    case 'date':
      // Digits, signs, dots, dashes, colons and spaces: never quoted.
      return String;
    case 'datetime':
      // Exactly the column's fractional digits, as in JSON (the binary protocol drops a zero one).
      return temporalText(column);
    case 'float':
      return column.dataType === 'float'
        ? (value) => finite(writeFloat32(value))
        : (value) => (Number.isFinite(Number(value)) ? String(Number(value)) : '');
    case 'bit':
      return bitText;
    case 'binary':
      return (value) => (Buffer.isBuffer(value) ? base64(value) : text(value));
    case 'json':
      return formulas === 'escape' ? safeJson : text;
    case 'string':
      // A TIME is digits, colons and a sign (a negative one is no formula), with its n digits.
      if (column.dataType === 'time') return temporalText(column);
      return formulas === 'escape' ? safeText : text;
    case 'geometry':
      // The GeoJSON the JSON answer holds.
      return (value) => (Buffer.isBuffer(value) ? csvField(wkbToGeoJson(value)) : text(value));
  }
}

/** How many slots of the row array a field reads (rows.ts Field). */
function width(field: Field): number {
  const inner = (fields: readonly Field[]) => fields.reduce((sum, f) => sum + width(f), 0);
  switch (field.kind) {
    case 'object':
      return 1 + inner(field.fields);
    case 'nested':
      return inner(field.fields);
    default:
      return 1;
  }
}

/**
 * The JSON of an expanded relation's value, as the JSON answer writes it under its key: the
 * JSON serializer of that one field writes `{"<name>":<value>}`, whose value is cut out.
 */
function relationWriter(field: Field, at: number): (row: readonly unknown[]) => string {
  const json = shapeSerializer([field]);
  const prefix = `{${JSON.stringify(field.name)}:`.length;
  const end = at + width(field);
  return (row) => csvField(json(row.slice(at, end)).slice(prefix, -1));
}

/** The header record: the field names, in order (no line break). */
export function csvHeader(fields: readonly Field[]): string {
  return fields.map((field) => csvField(field.name)).join(',');
}

/**
 * The serializer of rows shaped by `fields`, one record each (no line break); text cells that
 * would be formulas escaped unless `formulas` is `keep`.
 */
export function csvSerializer(
  fields: readonly Field[],
  formulas: CsvFormulas = 'escape',
): RowSerializer {
  const cells: ((row: readonly unknown[]) => string)[] = [];
  let slot = 0;
  for (const field of fields) {
    const at = slot;
    if (field.kind === 'value') {
      const write = cellWriterFor(field.column, formulas);
      cells.push((row) => {
        const value = row[at];
        return value === null || value === undefined ? '' : write(value);
      });
    } else {
      cells.push(relationWriter(field, at));
    }
    slot += width(field);
  }
  const count = cells.length;
  return (row) => {
    let record = '';
    for (let i = 0; i < count; i++) {
      record += (i === 0 ? '' : ',') + (cells[i] as (row: readonly unknown[]) => string)(row);
    }
    return record;
  };
}
