/**
 * A page's sort key values (sql/compile-seek.ts): the row → the token → the parameter, shared by
 * the column kinds that keep them alike (kinds.ts).
 */
import mysql from 'mysql2';

const { TypedParameter } = mysql;

/** A sort key's value as a token keeps it: JSON that reads back exactly. */
export type SeekValue = string | number | null;

/** Integer text as MySQL writes it. */
const INTEGER = /^-?[0-9]+$/;
/** Dates, times and datetimes as the driver gives them (db/pool.ts dateStrings). */
export const TEMPORAL = /^-?[0-9][0-9:. -]*$/;

/** BIT(n) arrives as big-endian bytes. */
function bitsOf(bytes: Buffer): string {
  let n = 0n;
  for (const byte of bytes) n = (n << 8n) | BigInt(byte);
  return String(n);
}

/** An integer key (integer types, YEAR, BIT, an ENUM's or SET's number) as its digits. */
export function integerKeyValue(_column: unknown, value: unknown): string {
  return Buffer.isBuffer(value) ? bitsOf(value) : String(value);
}

/** An integer of up to 64 bits, exactly: a JS number would go as a DOUBLE. */
export function integerParameter(value: string | number, unsigned: boolean): unknown {
  if (typeof value !== 'string' || !INTEGER.test(value)) return undefined;
  return unsigned ? TypedParameter.BIGINT.unsigned(value) : TypedParameter.BIGINT(value);
}

/** Any other key as its text. */
export const textKeyValue = (_column: unknown, value: unknown): string => String(value);
