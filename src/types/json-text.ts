/**
 * The writers of one value's JSON text (docs/types.md), from the value as mysql2 returns it
 * (`driver`: DECIMAL, BIGINT, dates and JSON as exact strings, FLOAT/DOUBLE/INT as numbers,
 * binary and BIT as Buffers) or from the JSON token MySQL wrote inside a related array (`text`).
 * The column kinds (kinds.ts) pick one per column when a row shape is built (types/rows.ts).
 */
import { wkbToGeoJson } from '../db/geometry.js';

export type ValueWriter = (value: unknown) => string;

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

export function writeDouble(value: unknown): string {
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

export function writeBinary(value: unknown): string {
  return Buffer.isBuffer(value) ? `"${value.toString('base64')}"` : quote(value);
}

/** A JSON column's text is valid JSON already (MySQL's JSON type, MariaDB's json_valid check). */
export function writeJson(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Dates and times are digits, dashes, colons, dots and spaces: nothing to escape. */
export function writeTemporal(value: unknown): string {
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
export function temporalWriter(digits: number, datetime: boolean): ValueWriter {
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
 * quotes: what a CSV cell holds (types/csv-rows.ts), so both answers carry the same n digits.
 */
export function temporalText(digits: number, datetime: boolean): (value: unknown) => string {
  if (digits === 0) return String;
  const zeros = ZEROS[digits] ?? '';
  const complete = datetime ? 20 + digits : -1;
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

export function writeString(value: unknown): string {
  if (typeof value === 'string') return quoteString(value);
  if (Buffer.isBuffer(value)) return writeBinary(value);
  return JSON.stringify(value) ?? 'null';
}

/** WKB from ST_AsBinary (sql/compile-read.ts) as GeoJSON. */
export function writeGeometry(value: unknown): string {
  return Buffer.isBuffer(value) ? wkbToGeoJson(value) : writeString(value);
}

// ---- tokens: the JSON MySQL wrote inside a related array (sql/compile-read.ts textOf) --------

/** The token of a JSON string without its quotes; only for tokens without escapes. */
export const unquoted = (token: string): string => token.slice(1, -1);

/** A JSON string token's text: JSON.parse only when it holds an escape. */
export function decoded(token: string): string {
  return token.includes('\\') ? (JSON.parse(token) as string) : unquoted(token);
}

/** A driver writer of text values, given a string token. */
export const textWriter =
  (writer: ValueWriter): ValueWriter =>
  (t) =>
    writer(decoded(t as string));
