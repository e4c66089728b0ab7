/**
 * MySQL value → JSON text (docs/types.md). A serializer is built once per column list and turns a
 * row (an array, in select order) into one JSON object's text without building an object first.
 * Input values are what the pool's options make mysql2 return: DECIMAL, BIGINT, dates and JSON as
 * exact strings, FLOAT/DOUBLE/INT as numbers, binary and BIT as Buffers.
 */
import { relatedRowsTooLarge } from '../errors.js';
import { wkbToGeoJson } from './geometry.js';
import { type ColumnInfo, fractionDigits, type JsonKind, type TableInfo } from './schema-types.js';

type ValueWriter = (value: unknown) => string;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = -MAX_SAFE;

function quote(value: unknown): string {
  return JSON.stringify(String(value));
}

/** BIGINT text: a JSON number while JavaScript can hold it exactly, else a string. */
export function writeInteger(value: unknown): string {
  if (typeof value === 'number') return String(value);
  const text = String(value);
  // 15 digits always fit in 2^53; only longer ones need the exact comparison.
  if (text.length <= 15) return text;
  const n = BigInt(text);
  return n > MAX_SAFE || n < MIN_SAFE ? `"${text}"` : text;
}

/** FLOAT arrives widened to a double (1.1 → 1.100000023841858); print the shortest text that is the same float. */
export function writeFloat32(value: unknown): string {
  const n = Number(value);
  if (!Number.isFinite(n)) return 'null';
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(n.toPrecision(digits));
    if (Math.fround(candidate) === n) return String(candidate);
  }
  return String(n);
}

function writeDouble(value: unknown): string {
  const n = Number(value);
  return Number.isFinite(n) ? String(n) : 'null';
}

/** BIT(n) arrives as big-endian bytes. */
export function writeBit(value: unknown): string {
  if (!Buffer.isBuffer(value)) return writeInteger(value);
  let n = 0n;
  for (const byte of value) n = (n << 8n) | BigInt(byte);
  return n > MAX_SAFE ? `"${n}"` : String(n);
}

function writeBinary(value: unknown): string {
  return Buffer.isBuffer(value) ? `"${value.toString('base64')}"` : quote(value);
}

/** A JSON column's text is valid JSON already (MySQL's JSON type, MariaDB's json_valid check). */
function writeJson(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Dates and times are digits, dashes, colons, dots and spaces: nothing to escape. */
function writeTemporal(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : writeString(value);
}

/**
 * `text` with exactly `digits` fractional digits, as MySQL shows the value. mysql2's binary
 * protocol (every prepared statement) leaves out a fraction of zero (`09:00:00` for a
 * DATETIME(3) `09:00:00.000`) and writes a TIME's without its trailing zeros (`10:00:00.5`);
 * the text protocol and CAST(… AS CHAR) give the column's digits already.
 */
export function withFraction(text: string, digits: number, zeros = ZEROS[digits] ?? ''): string {
  const point = text.lastIndexOf('.');
  if (point === -1) return text + zeros;
  const have = text.length - point - 1;
  if (have === digits) return text;
  return have < digits ? text + zeros.slice(have + 1) : text.slice(0, point + 1 + digits);
}

/** `.`, `.0`, … `.000000`: the zero fractions, made once. */
const ZEROS = ['', '.0', '.00', '.000', '.0000', '.00000', '.000000'];

/**
 * A DATETIME(n)/TIMESTAMP(n)/TIME(n) writer: exactly n fractional digits (none for n = 0). A
 * DATETIME already `YYYY-MM-DD HH:MM:SS.` and n digits long (every nonzero fraction from the
 * driver) is written as it is.
 */
function temporalWriter(digits: number, datetime: boolean): ValueWriter {
  if (digits === 0) return writeTemporal;
  const zeros = ZEROS[digits] ?? '';
  const complete = datetime ? 20 + digits : -1;
  return (value) => {
    if (typeof value !== 'string') return writeString(value);
    return value.length === complete ? `"${value}"` : `"${withFraction(value, digits, zeros)}"`;
  };
}

/**
 * The text of a DATETIME(n)/TIMESTAMP(n)/TIME(n) value as temporalWriter writes it, without the
 * quotes: what a CSV cell holds (db/csv-rows.ts), so both answers carry the same n digits.
 */
export function temporalText(column: ColumnInfo): (value: unknown) => string {
  const digits = fractionDigits(column);
  if (digits === 0) return String;
  const zeros = ZEROS[digits] ?? '';
  const complete = column.kind === 'datetime' ? 20 + digits : -1;
  return (value) => {
    const text = String(value);
    return text.length === complete ? text : withFraction(text, digits, zeros);
  };
}

/**
 * What JSON.stringify escapes in a string: `"`, `\`, control characters and (since ES2019) UTF-16
 * surrogates, of which it escapes the unpaired ones; text without any of them is written as is.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it looks for.
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/;

/** JSON.stringify of a string, about twice as fast for the usual text that needs no escaping. */
export function quoteString(value: string): string {
  return NEEDS_ESCAPING.test(value) ? JSON.stringify(value) : `"${value}"`;
}

function writeString(value: unknown): string {
  if (typeof value === 'string') return quoteString(value);
  if (Buffer.isBuffer(value)) return writeBinary(value);
  return JSON.stringify(value) ?? 'null';
}

function writerFor(column: ColumnInfo): ValueWriter {
  const kind: JsonKind = column.kind;
  switch (kind) {
    case 'integer':
      return writeInteger;
    case 'decimal':
      // The server's DECIMAL text ("-12.50") is already a valid JSON number with the stored digits.
      return String;
    case 'float':
      return column.dataType === 'float' ? writeFloat32 : writeDouble;
    case 'year':
      return String;
    case 'bit':
      return writeBit;
    case 'date':
      return writeTemporal;
    case 'datetime':
      return temporalWriter(fractionDigits(column), true);
    case 'string':
      return column.dataType === 'time'
        ? temporalWriter(fractionDigits(column), false)
        : writeString;
    case 'json':
      return writeJson;
    case 'binary':
      return writeBinary;
    case 'geometry':
      // WKB from ST_AsBinary (sql/compile-read.ts).
      return writeGeometry;
  }
}

function writeGeometry(value: unknown): string {
  return Buffer.isBuffer(value) ? wkbToGeoJson(value) : writeString(value);
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

/**
 * Values as mysql2 returns them (`driver`), or as the JSON tokens MySQL wrote inside a related
 * array (`text`: `12`, `"abc"`, `null`, each exactly as it stands in the text).
 */
type Mode = 'driver' | 'text';

/** The token of a JSON string without its quotes; only for tokens without escapes. */
const unquoted = (token: string): string => token.slice(1, -1);

/** A JSON string token's text: JSON.parse only when it holds an escape. */
function decoded(token: string): string {
  return token.includes('\\') ? (JSON.parse(token) as string) : unquoted(token);
}

/**
 * The writer of a token in text mode: the same JSON the driver's value would have given
 * (sql/compile-read.ts textOf says what MySQL writes for each type). MySQL's JSON escapes quotes,
 * backslashes and control characters, exactly what JSON.stringify escapes in text from MySQL
 * (no lone surrogates there), so a string token without a backslash is already the answer's.
 */
function tokenWriterFor(column: ColumnInfo): ValueWriter {
  switch (column.kind) {
    case 'integer':
      // An exact JSON number, or BIGINT as text.
      return column.dataType === 'bigint'
        ? (t) => writeInteger(unquoted(t as string))
        : (t) => t as string;
    case 'year':
      return (t) => t as string;
    case 'decimal':
      return (t) => unquoted(t as string);
    case 'float': {
      const write = column.dataType === 'float' ? writeFloat32 : writeDouble;
      return (t) => write(Number(unquoted(t as string)));
    }
    case 'bit':
      return (t) => writeInteger(unquoted(t as string));
    case 'binary':
      // TO_BASE64 breaks its text into lines of 76 characters (`\n` in the token).
      return (t) => (t as string).replaceAll('\\n', '');
    case 'geometry':
      // TO_BASE64(ST_AsBinary(…)): the same WKB as at the top level (base64 skips the `\n`s).
      return (t) => wkbToGeoJson(Buffer.from(decoded(t as string), 'base64'));
    case 'json':
      // The column's text, itself JSON.
      return (t) => decoded(t as string);
    case 'date':
    case 'datetime':
      return textWriter(writerFor(column));
    case 'string':
      return column.dataType === 'time'
        ? textWriter(writerFor(column))
        : (t) =>
            (t as string).includes('\\') ? quoteString(JSON.parse(t as string)) : (t as string);
  }
}

/** A driver writer of text values, given a string token. */
const textWriter =
  (writer: ValueWriter): ValueWriter =>
  (t) =>
    writer(decoded(t as string));

/** The parts of one object's text, each reading its slots of `row`; and how many slots in all. */
function fieldsWriter(
  fields: readonly Field[],
  mode: Mode,
  start: number,
): { write: (row: readonly unknown[]) => string; width: number } {
  const parts: ((row: readonly unknown[]) => string)[] = [];
  const isNull =
    mode === 'driver'
      ? (value: unknown) => value === null || value === undefined
      : (value: unknown) => value === 'null';
  let slot = start;
  fields.forEach((field, i) => {
    const prefix = `${i === 0 ? '' : ','}${JSON.stringify(field.name)}:`;
    const at = slot;
    switch (field.kind) {
      case 'value': {
        const writer = mode === 'driver' ? writerFor(field.column) : tokenWriterFor(field.column);
        parts.push((row) => {
          const value = row[at];
          return prefix + (isNull(value) ? 'null' : writer(value));
        });
        slot += 1;
        return;
      }
      case 'object': {
        const inner = fieldsWriter(field.fields, mode, at + 1);
        parts.push((row) => (isNull(row[at]) ? `${prefix}null` : `${prefix}{${inner.write(row)}}`));
        slot += 1 + inner.width;
        return;
      }
      case 'nested': {
        const inner = fieldsWriter(field.fields, mode, at);
        parts.push((row) => `${prefix}{${inner.write(row)}}`);
        slot += inner.width;
        return;
      }
      case 'array': {
        const inner = fieldsWriter(field.fields, 'text', 0);
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
export function shapeSerializer(fields: readonly Field[]): RowSerializer {
  const { write } = fieldsWriter(fields, 'driver', 0);
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
