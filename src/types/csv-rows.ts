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

import type { ColumnInfo } from '../db/schema-types.js';
import { type CellWriter, type CsvFormulas, csvField } from './csv-text.js';
import { COLUMN_KINDS } from './kinds.js';
import { type Field, fieldWidth, type RowSerializer, shapeSerializer } from './rows.js';

export type { CsvFormulas } from './csv-text.js';

/** A column's writer of fields, its kind's (types/kinds.ts), chosen once per row shape. */
function cellWriterFor(column: ColumnInfo, formulas: CsvFormulas): CellWriter {
  return COLUMN_KINDS[column.kind].csv(column, formulas);
}

/**
 * The JSON of an expanded relation's value, as the JSON answer writes it under its key: the
 * JSON serializer of that one field writes `{"<name>":<value>}`, whose value is cut out.
 */
function relationWriter(field: Field, at: number): (row: readonly unknown[]) => string {
  const json = shapeSerializer([field]);
  const prefix = `{${JSON.stringify(field.name)}:`.length;
  const end = at + fieldWidth(field);
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
    slot += fieldWidth(field);
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
