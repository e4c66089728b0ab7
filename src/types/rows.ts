/**
 * MySQL value → JSON text (docs/types.md). A serializer is built once per column list and turns a
 * row (an array, in select order) into one JSON object's text without building an object first.
 * Input values are what the pool's options make mysql2 return: DECIMAL, BIGINT, dates and JSON as
 * exact strings, FLOAT/DOUBLE/INT as numbers, binary and BIT as Buffers. Each column's writer is
 * its kind's (types/kinds.ts), chosen once when the serializer is built.
 */

import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { relatedRowsTooLarge } from '../errors.js';
import type { ValueWriter } from './json-text.js';
import { COLUMN_KINDS } from './kinds.js';

/** A column's writer of values as mysql2 returns them, chosen once per row shape. */
function writerFor(column: ColumnInfo): ValueWriter {
  return COLUMN_KINDS[column.kind].json(column);
}

/**
 * A column's writer of the tokens MySQL wrote inside a related array: the same JSON the driver's
 * value would have given (sql/compile-read.ts textOf says what MySQL writes for each type).
 */
function tokenWriterFor(column: ColumnInfo): ValueWriter {
  return COLUMN_KINDS[column.kind].jsonToken(column);
}

export type RowSerializer = (row: readonly unknown[]) => string;

/**
 * What one row object holds, key by key, and where its values sit in the row array (its
 * slots, in order): a column's value takes one slot; a related object takes a marker slot
 * (NULL when there is no related row) and then its fields' slots; a related array takes one
 * slot, the rows as text from MySQL (`<n>:<json array>,<json array>,…`, sql/compile-read.ts).
 */
export type Field =
  | { readonly kind: 'value'; readonly name: string; readonly column: ColumnInfo }
  | { readonly kind: 'object'; readonly name: string; readonly fields: readonly Field[] }
  | { readonly kind: 'array'; readonly name: string; readonly fields: readonly Field[] }
  /** An object that is always there, its fields' slots without a marker (`$apply`'s path groups). */
  | { readonly kind: 'nested'; readonly name: string; readonly fields: readonly Field[] };

/** How many slots of the row array a field reads. */
export function fieldWidth(field: Field): number {
  // Over a field's shape (Field above), not a column's kind.
  switch (field.kind) {
    case 'object':
      return 1 + field.fields.reduce((sum, f) => sum + fieldWidth(f), 0);
    case 'nested':
      return field.fields.reduce((sum, f) => sum + fieldWidth(f), 0);
    default:
      return 1;
  }
}

/**
 * Values as mysql2 returns them (`driver`), or as the JSON tokens MySQL wrote inside a related
 * array (`text`: `12`, `"abc"`, `null`, each exactly as it stands in the text).
 */
export type RowMode = 'driver' | 'text';

/**
 * How a row's keys and values are written: tablegate's JSON (docs/types.md), or another
 * protocol's form of the same values (odata/entity-json.ts).
 */
export interface RowForm {
  /** A key's text for the field's name. */
  readonly key: (name: string) => string;
  /** The writer of a column's values as the mode gives them. */
  readonly value: (column: ColumnInfo, mode: RowMode) => ValueWriter;
}

export const JSON_FORM: RowForm = {
  key: (name) => name,
  value: (column, mode) => (mode === 'driver' ? writerFor(column) : tokenWriterFor(column)),
};

/** The parts of one object's text, each reading its slots of `row`; and how many slots in all. */
function fieldsWriter(
  fields: readonly Field[],
  mode: RowMode,
  start: number,
  form: RowForm = JSON_FORM,
): { write: (row: readonly unknown[]) => string; width: number } {
  const parts: ((row: readonly unknown[]) => string)[] = [];
  const isNull =
    mode === 'driver'
      ? (value: unknown) => value === null || value === undefined
      : (value: unknown) => value === 'null';
  let slot = start;
  fields.forEach((field, i) => {
    const prefix = `${i === 0 ? '' : ','}${JSON.stringify(form.key(field.name))}:`;
    const at = slot;
    // Over the field's shape; a value's writer is its column kind's (form.value).
    switch (field.kind) {
      case 'value': {
        const writer = form.value(field.column, mode);
        parts.push((row) => {
          const value = row[at];
          return prefix + (isNull(value) ? 'null' : writer(value));
        });
        slot += 1;
        return;
      }
      case 'object': {
        const inner = fieldsWriter(field.fields, mode, at + 1, form);
        parts.push((row) => (isNull(row[at]) ? `${prefix}null` : `${prefix}{${inner.write(row)}}`));
        slot += 1 + inner.width;
        return;
      }
      case 'nested': {
        const inner = fieldsWriter(field.fields, mode, at, form);
        parts.push((row) => `${prefix}{${inner.write(row)}}`);
        slot += inner.width;
        return;
      }
      case 'array': {
        const inner = fieldsWriter(field.fields, 'text', 0, form);
        const tokens: string[] = new Array(inner.width);
        parts.push((row) => {
          const value = row[at];
          // Inside another array the text is a JSON string of its own.
          const text = mode === 'driver' || isNull(value) ? value : JSON.parse(value as string);
          let out = `${prefix}[`;
          let first = true;
          scanRelatedRows(text, tokens, field.name, () => {
            out += `${first ? '' : ','}{${inner.write(tokens)}}`;
            first = false;
          });
          return `${out}]`;
        });
        slot += 1;
        return;
      }
    }
  });
  const count = parts.length;
  return {
    write: (row) => {
      let text = '';
      for (let i = 0; i < count; i++)
        text += (parts[i] as (row: readonly unknown[]) => string)(row);
      return text;
    },
    width: slot - start,
  };
}

const COMMA = 44;
const SPACE = 32;
const QUOTE = 34;
const BACKSLASH = 92;
const OPEN = 91;
const CLOSE = 93;

/**
 * The rows of a related array from its text, `<n>:` and n JSON arrays (`0:` for none): each
 * row's tokens into `tokens`, then `row()`. Not a JSON parser: MySQL wrote the text (its
 * JSON_ARRAY's `[a, "b", null]`), and what is checked is that it is whole. A value MySQL cut
 * short has fewer rows than it says, and one it gave up on (longer than max_allowed_packet) is
 * NULL: both are refused rather than answered incomplete.
 */
function scanRelatedRows(value: unknown, tokens: string[], name: string, row: () => void): void {
  if (typeof value !== 'string') throw relatedRowsTooLarge(name);
  const colon = value.indexOf(':');
  const count = Number(value.slice(0, colon));
  if (colon === -1 || !Number.isInteger(count)) throw relatedRowsTooLarge(name);
  const width = tokens.length;
  let i = colon + 1;
  for (let r = 0; r < count; r++) {
    if (r > 0 && value.charCodeAt(i++) !== COMMA) throw relatedRowsTooLarge(name);
    if (value.charCodeAt(i++) !== OPEN) throw relatedRowsTooLarge(name);
    for (let k = 0; ; k++) {
      while (value.charCodeAt(i) === SPACE) i++;
      let end: number;
      if (value.charCodeAt(i) === QUOTE) {
        end = i;
        for (;;) {
          end = value.indexOf('"', end + 1);
          if (end === -1) throw relatedRowsTooLarge(name);
          // The quote closes the string unless an odd run of backslashes escapes it.
          let backslashes = 0;
          while (value.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
          if (backslashes % 2 === 0) break;
        }
        end += 1;
      } else {
        end = i;
        for (;;) {
          const c = value.charCodeAt(end);
          if (c === COMMA || c === CLOSE || Number.isNaN(c)) break;
          end++;
        }
      }
      if (k >= width) throw relatedRowsTooLarge(name);
      tokens[k] = value.slice(i, end);
      i = end;
      const next = value.charCodeAt(i++);
      if (next === CLOSE) {
        if (k !== width - 1) throw relatedRowsTooLarge(name);
        break;
      }
      if (next !== COMMA) throw relatedRowsTooLarge(name);
    }
    row();
  }
  if (i !== value.length) throw relatedRowsTooLarge(name);
}

/** The serializer of rows shaped by `fields`, read as mysql2 returns them. */
export function shapeSerializer(fields: readonly Field[], form?: RowForm): RowSerializer {
  const { write } = fieldsWriter(fields, 'driver', 0, form);
  return (row) => `{${write(row)}}`;
}

/** Builds the serializer for one select list: keys are the column names, in select order. */
export function rowSerializer(columns: readonly ColumnInfo[]): RowSerializer {
  const prefixes = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`);
  const writers = columns.map(writerFor);
  const count = columns.length;
  return (row) => {
    let text = '';
    for (let i = 0; i < count; i++) {
      const value = row[i];
      text +=
        prefixes[i] +
        (value === null || value === undefined ? 'null' : (writers[i] as ValueWriter)(value));
    }
    return count === 0 ? '{}' : `${text}}`;
  };
}

/** Per table, the serializers of the select lists seen lately (a schema re-read makes new tables). */
const serializers = new WeakMap<TableInfo, Map<string, RowSerializer>>();
const SERIALIZERS_PER_TABLE = 64;

/** rowSerializer, built once per table and select list. */
export function cachedRowSerializer(
  table: TableInfo,
  columns: readonly ColumnInfo[],
): RowSerializer {
  let byColumns = serializers.get(table);
  if (!byColumns) {
    byColumns = new Map();
    serializers.set(table, byColumns);
  }
  const key = columns === table.columns ? '*' : columns.map((c) => c.name).join('\u0000');
  let serializer = byColumns.get(key);
  if (!serializer) {
    if (byColumns.size >= SERIALIZERS_PER_TABLE) byColumns.clear();
    serializer = rowSerializer(columns);
    byColumns.set(key, serializer);
  }
  return serializer;
}
