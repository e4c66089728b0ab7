/**
 * The CSV framing of a read's rows (RFC 4180, docs/reading.md): the header record, then each
 * row's record (pipeline/read.ts csvOf), every record ended by CRLF; streamed, fetched whole and
 * cut short exactly as the JSON array is (json-rows.ts).
 */
import type { CsvRead } from '../pipeline/read.js';
import type { RowsFraming } from './json-rows.js';

export const CSV_TYPE = 'text/csv; charset=utf-8';

/** A front door's framing per CSV shape (itself a memo of pipeline/read.ts): the same object for every read of it. */
const framings = new WeakMap<CsvRead, RowsFraming>();

/** The header comes first; each record (csvOf) starts with the CRLF that ends the one before. */
export function csvFraming(csv: CsvRead): RowsFraming {
  let framing = framings.get(csv);
  if (framing === undefined) {
    framing = { type: CSV_TYPE, head: csv.header, between: '', tail: '\r\n' };
    framings.set(csv, framing);
  }
  return framing;
}
