/**
 * Rows read by plain SQL (the text protocol, every value as the server's own text) and turned
 * into what docs/types.md says a read answers: integers and DECIMAL as numbers
 * with the server's digits (BIGINT beyond ±2^53 as a string), dates and times as the server's
 * text, binary as base64, BIT as a number, JSON columns as their JSON value, FLOAT and DOUBLE as
 * the number MySQL holds. The expected side of tests that compare the gateway with hand-written
 * SQL; numbers are ExactNumbers (exact-json.ts), so digits are compared, not floats.
 */
import mysql from 'mysql2/promise';
import { ExactNumber, parseExact } from './exact-json.js';
import { testServer } from './mysql-url.js';

export type SqlRow = Record<string, unknown>;

// mysql2's column type codes (protocol constants).
const INTEGER_TYPES = new Set([1, 2, 3, 8, 9, 13]); // TINY SHORT LONG LONGLONG INT24 YEAR
const DECIMAL = 246;
const FLOAT = 4;
const DOUBLE = 5;
const BIT = 16;
const BINARY_CHARSET = 63;
const TEXT_TYPES = new Set([15, 252, 253, 254, 247, 248]); // VARCHAR BLOB VAR_STRING STRING ENUM SET

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

interface Field {
  readonly name: string;
  readonly type: number;
  readonly characterSet: number;
}

/** A connection to `database` for reading expected values; end it after the tests. */
export function oracleConnection(database: string): Promise<mysql.Connection> {
  return mysql.createConnection({
    ...testServer(),
    database,
    charset: 'utf8mb4_unicode_ci',
    timezone: 'Z',
    // Every value as the bytes the server sent (its text, or a binary column's bytes); what
    // they mean is decided with the whole column definition (convert, below).
    typeCast: (field) => field.buffer(),
  });
}

function integerValue(text: string): ExactNumber | string {
  const n = BigInt(text);
  return n > MAX_SAFE || n < -MAX_SAFE ? text : new ExactNumber(text);
}

/** Numbers MySQL computes in floating point: compared by value (`Number`), not by digits. */
export class FloatValue {
  constructor(
    readonly value: number,
    readonly single: boolean,
  ) {}
}

function convert(bytes: Buffer | null, field: Field, json: ReadonlySet<string>): unknown {
  if (bytes === null) return null;
  if (field.type === BIT) {
    let n = 0n;
    for (const byte of bytes) n = (n << 8n) | BigInt(byte);
    return n > MAX_SAFE ? String(n) : new ExactNumber(String(n));
  }
  if (field.characterSet === BINARY_CHARSET && TEXT_TYPES.has(field.type)) {
    return bytes.toString('base64');
  }
  const text = bytes.toString('utf8');
  if (json.has(field.name)) return parseExact(text);
  if (INTEGER_TYPES.has(field.type)) return integerValue(text);
  if (field.type === DECIMAL) return new ExactNumber(text);
  if (field.type === FLOAT || field.type === DOUBLE) {
    return new FloatValue(Number(text), field.type === FLOAT);
  }
  return text;
}

/**
 * The rows of `sql`, keys in select order, values as a read answers them. `json` names the
 * columns that hold JSON (MariaDB sends them as text, like any LONGTEXT).
 */
export async function sqlRows(
  connection: mysql.Connection,
  sql: string,
  params: readonly unknown[] = [],
  json: readonly string[] = [],
): Promise<SqlRow[]> {
  const [rows, fields] = await connection.query({ sql, rowsAsArray: true }, [...params] as never[]);
  const jsonNames = new Set(json);
  return (rows as (Buffer | null)[][]).map((row) =>
    Object.fromEntries(
      (fields as unknown as Field[]).map((field, i) => [
        field.name,
        convert(row[i] ?? null, field, jsonNames),
      ]),
    ),
  );
}

/** The one row of `sql`, or null. */
export async function sqlRow(
  connection: mysql.Connection,
  sql: string,
  params: readonly unknown[] = [],
  json: readonly string[] = [],
): Promise<SqlRow | null> {
  const rows = await sqlRows(connection, sql, params, json);
  if (rows.length > 1) throw new Error(`${sql} gave ${rows.length} rows`);
  return rows[0] ?? null;
}

/** A value of a row as a statement parameter (an ExactNumber as its text). */
export function param(value: unknown): unknown {
  return value instanceof ExactNumber ? value.text : value;
}

/**
 * `got` (parsed with parseExact) and `expected` (built from sqlRows) hold the same values in the
 * same key order. FloatValues match a number whose value is the same double (or float).
 */
export function sameAnswer(got: unknown, expected: unknown, path = '$'): string | null {
  if (expected instanceof FloatValue) {
    if (!(got instanceof ExactNumber)) return `${path}: expected a number, got ${show(got)}`;
    const a = Number(got.text);
    const ok = expected.single
      ? Math.fround(a) === Math.fround(expected.value)
      : a === expected.value;
    return ok ? null : `${path}: ${got.text} is not ${expected.value}`;
  }
  if (expected instanceof ExactNumber) {
    return got instanceof ExactNumber && got.text === expected.text
      ? null
      : `${path}: expected ${expected.text}, got ${show(got)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(got)) return `${path}: expected an array, got ${show(got)}`;
    if (got.length !== expected.length) {
      return `${path}: expected ${expected.length} items, got ${got.length}: ${show(got)}`;
    }
    for (let i = 0; i < expected.length; i++) {
      const problem = sameAnswer(got[i], expected[i], `${path}[${i}]`);
      if (problem !== null) return problem;
    }
    return null;
  }
  if (expected !== null && typeof expected === 'object') {
    if (
      got === null ||
      typeof got !== 'object' ||
      Array.isArray(got) ||
      got instanceof ExactNumber
    ) {
      return `${path}: expected an object, got ${show(got)}`;
    }
    const keys = Object.keys(expected);
    const gotKeys = Object.keys(got);
    if (keys.join('\u0000') !== gotKeys.join('\u0000')) {
      return `${path}: expected keys ${keys.join(',')}, got ${gotKeys.join(',')}`;
    }
    for (const key of keys) {
      const problem = sameAnswer(
        (got as Record<string, unknown>)[key],
        (expected as Record<string, unknown>)[key],
        `${path}.${key}`,
      );
      if (problem !== null) return problem;
    }
    return null;
  }
  return got === expected ? null : `${path}: expected ${show(expected)}, got ${show(got)}`;
}

function show(value: unknown): string {
  const text = JSON.stringify(value, (_, v) => (v instanceof ExactNumber ? `#${v.text}` : v));
  return text === undefined ? String(value) : text.length > 300 ? `${text.slice(0, 300)}…` : text;
}
