/**
 * DATE, DATETIME and TIMESTAMP values of mysql2's binary protocol (every prepared statement) as
 * text, written faster. With `dateStrings` (db/pool.ts) mysql2 3.x builds each value's text with
 * two arrays, two `join`s and a `toString` per field (Packet#readDateTimeString), a sixth of a
 * 50-row page's CPU in bench (b) (bench/README.md, "Measurements behind the code"). This writes the same text from a table of
 * two-digit strings. mysql2 does not export its Packet class, so it is reached by its file; the
 * faster method takes the place of mysql2's only once it gave mysql2's text, byte for byte, on
 * every value of {@link SAMPLES}, so a mysql2 whose format changed, or whose file moved, keeps
 * its own.
 */
import { createRequire } from 'node:module';
import path from 'node:path';

/** What this module uses of mysql2's Packet (lib/packets/packet.js). */
export interface BinaryPacket {
  offset: number;
  readInt8(): number;
  readInt16(): number;
  readInt32(): number;
  readDateTimeString(decimals: number, timeSep: string | null, columnType: number | null): string;
}

interface PacketClass {
  new (id: number, buffer: Buffer, start: number, end: number): BinaryPacket;
  prototype: BinaryPacket;
}

/** mysql2's column types (lib/constants/types.js) that this module reads or names. */
export const COLUMN_TYPE = { TIMESTAMP: 0x07, DATE: 0x0a, DATETIME: 0x0c } as const;

const require = createRequire(import.meta.url);

/**
 * The Packet class mysql2 itself uses: the same file, so the same module instance; undefined
 * when a mysql2 release keeps it elsewhere (its own method then stays in place).
 */
export const Packet = ((): PacketClass | undefined => {
  try {
    return require(
      path.join(path.dirname(require.resolve('mysql2')), 'lib', 'packets', 'packet.js'),
    ) as PacketClass;
  } catch {
    return undefined;
  }
})();

/** mysql2's own method, kept before it is replaced (the samples and tests compare against it). */
export const mysqlReadDateTimeString = Packet?.prototype.readDateTimeString;

/** 0…255 as mysql2's leftPad(2, n) writes them: two digits, and three past 99. */
const TWO_DIGITS = Array.from({ length: 256 }, (_, n) => (n < 10 ? `0${n}` : String(n)));

/** leftPad(4, year): four digits (a year past 9,999 comes only from a broken packet). */
function yearText(year: number): string {
  return year < 10_000
    ? (TWO_DIGITS[Math.trunc(year / 100)] as string) + (TWO_DIGITS[year % 100] as string)
    : String(year);
}

/**
 * mysql2's readDateTimeString, with the same reads of the packet in the same order: a length
 * byte (0, 4, 7 or 11), then year, month, day, then hour, minute, second, then microseconds.
 */
export function readDateTimeString(
  this: BinaryPacket,
  decimals: number,
  timeSep: string | null,
  columnType: number | null,
): string {
  const length = this.readInt8();
  let text = '0000-00-00';
  if (length > 3) {
    const year = this.readInt16();
    const month = this.readInt8();
    const day = this.readInt8();
    text = `${yearText(year)}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}`;
  }
  if (length > 6) {
    const hour = this.readInt8();
    const minute = this.readInt8();
    const second = this.readInt8();
    text += `${timeSep || ' '}${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[second]}`;
  } else if (columnType === COLUMN_TYPE.DATETIME || columnType === COLUMN_TYPE.TIMESTAMP) {
    text += ' 00:00:00';
  }
  if (length > 10) {
    const micros = this.readInt32();
    // As mysql2: all six digits cut to `decimals`, or the bare number when decimals is 0.
    text += `.${decimals ? String(micros).padStart(6, '0').slice(0, decimals) : micros}`;
  }
  return text;
}

/** One binary value: its bytes after the length byte, and the arguments mysql2 passes. */
interface Sample {
  readonly bytes: readonly number[];
  readonly decimals: number;
  readonly timeSep: string | null;
  readonly columnType: number;
}

/** A binary date value's bytes: length, year (little-endian), month, day, hh mm ss, µs. */
export function dateBytes(parts: readonly number[]): number[] {
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, micros = 0] = parts;
  const date = [year & 0xff, year >> 8, month, day];
  const time = [hour, minute, second];
  const fraction = [micros & 0xff, (micros >> 8) & 0xff, (micros >> 16) & 0xff, micros >>> 24];
  if (parts.length === 0) return [0];
  if (parts.length <= 3) return [4, ...date];
  if (parts.length <= 6) return [7, ...date, ...time];
  return [11, ...date, ...time, ...fraction];
}

/** Each length of value, the years and fields that pad, fractions cut and whole, both separators. */
const SAMPLES: readonly Sample[] = [
  ...[[], [2024, 1, 5], [999, 12, 31], [5, 1, 1], [10000, 1, 1]].flatMap((parts) =>
    [COLUMN_TYPE.DATE, COLUMN_TYPE.DATETIME, COLUMN_TYPE.TIMESTAMP].map((columnType) => ({
      bytes: dateBytes(parts),
      decimals: 0,
      timeSep: null,
      columnType,
    })),
  ),
  ...[' ', 'T', null].map((timeSep) => ({
    bytes: dateBytes([2024, 10, 9, 8, 7, 59]),
    decimals: 0,
    timeSep,
    columnType: COLUMN_TYPE.DATETIME,
  })),
  {
    bytes: dateBytes([2024, 200, 100, 123, 0, 9]),
    decimals: 0,
    timeSep: null,
    columnType: COLUMN_TYPE.DATETIME,
  },
  ...[0, 1, 3, 6].flatMap((decimals) =>
    [1, 120_000, 999_999].map((micros) => ({
      bytes: dateBytes([1970, 1, 1, 0, 0, 0, micros]),
      decimals,
      timeSep: null,
      columnType: COLUMN_TYPE.TIMESTAMP,
    })),
  ),
];

/** What a reader gives for one value, and where it leaves the packet. */
export function readSample(
  read: BinaryPacket['readDateTimeString'],
  bytes: readonly number[],
  decimals: number,
  timeSep: string | null,
  columnType: number | null,
): { text: string; offset: number } {
  if (Packet === undefined) throw new Error("mysql2's Packet class was not found");
  // A packet's payload starts after its 4-byte header.
  const buffer = Buffer.from([0, 0, 0, 0, ...bytes]);
  const packet = new Packet(0, buffer, 0, buffer.length);
  const text = read.call(packet, decimals, timeSep, columnType);
  return { text, offset: packet.offset };
}

/** Whether `reference` writes what {@link readDateTimeString} writes on every sample. */
export function agreesWith(reference: BinaryPacket['readDateTimeString']): boolean {
  return SAMPLES.every(({ bytes, decimals, timeSep, columnType }) => {
    const ours = readSample(readDateTimeString, bytes, decimals, timeSep, columnType);
    const theirs = readSample(reference, bytes, decimals, timeSep, columnType);
    return ours.text === theirs.text && ours.offset === theirs.offset;
  });
}

/**
 * Puts the faster reader in mysql2's place, when it writes what mysql2 writes on every sample.
 * Returns whether it is in place; calling it again changes nothing.
 */
export function useFasterBinaryDates(): boolean {
  if (Packet === undefined || typeof mysqlReadDateTimeString !== 'function') return false;
  if (Packet.prototype.readDateTimeString === readDateTimeString) return true;
  if (!agreesWith(mysqlReadDateTimeString)) return false;
  Packet.prototype.readDateTimeString = readDateTimeString;
  return true;
}
