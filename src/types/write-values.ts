/**
 * The checks and conversions of a JSON value on its way into a column (docs/types.md), each
 * refusing with INVALID_VALUE what MySQL would round or reinterpret without an error even in
 * strict mode. The column kinds (kinds.ts) put them together per kind; types/value-codec.ts is
 * where a value meets them.
 */
import { GeoJsonError, geoJsonToGeometry } from '../db/geometry.js';
import { type ColumnInfo, fractionDigits } from '../db/schema-types.js';
import { invalidValue } from '../errors.js';
import { excerpt, isDigitRun } from '../query/lexer.js';
import { readTemporalText } from '../query/temporal.js';

/**
 * A spatial column takes a GeoJSON geometry object (RFC 7946), stored as MySQL's internal
 * geometry bytes with the column's declared SRID, else 0 (db/geometry.ts). Anything else (WKT
 * text such as 'POINT(1 2)', a Feature) is refused here: MySQL would refuse it with an error
 * that does not say what it takes.
 */
export function geometryBytes(column: ColumnInfo, value: unknown, where: string): Buffer {
  if (typeof value !== 'object') {
    throw invalidValue(
      `${where} is spatial and takes a GeoJSON geometry object such as {"type": "Point", "coordinates": [1, 2]}, not ${describeValue(value)}`,
    );
  }
  try {
    return geoJsonToGeometry(value, column.dataType, column.srid ?? 0, where);
  } catch (error) {
    if (error instanceof GeoJsonError) throw invalidValue(error.message);
    throw error;
  }
}

/**
 * A text MySQL reads as a number when it names no member: an ENUM takes it as the position of a
 * member (`'4'`, ` 4`, `+4` and `04` all store the fourth one), a SET as a bit mask of members.
 * Both without a warning, even in strict mode.
 */
const NUMERIC_TEXT = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/;

/**
 * ENUM and SET: a text that is not a member name but a number would store some other member
 * (see NUMERIC_TEXT); refused, naming the members. A text that names no member as MySQL
 * compares them (the column's collation, usually case- and accent-insensitive, trailing spaces
 * ignored) is refused too, naming the members, where MySQL would only say "Data truncated".
 * A text that differs from a member only so is left to MySQL, which stores the member.
 */
export function checkMember(column: ColumnInfo, text: string, where: string): void {
  const members = membersOf(column);
  const list = () => members.map((member) => `'${member}'`).join(', ');
  const isEnum = column.dataType === 'enum';
  if (NUMERIC_TEXT.test(text) && !members.includes(text)) {
    throw invalidValue(
      isEnum
        ? `${where} must be one of ${list()}; MySQL would read ${shown(text)} as the position of a member`
        : `${where} takes members of ${list()}, separated by commas; MySQL would read ${shown(text)} as a set of positions`,
    );
  }
  if (members.includes(text)) return;
  const named = (item: string) => members.some((member) => sameMember(member, item));
  if (isEnum ? named(text) : text === '' || text.split(',').every(named)) return;
  throw invalidValue(
    isEnum
      ? `${where} must be one of ${list()}; ${shown(text)} is not`
      : `${where} takes members of ${list()}, separated by commas; ${shown(text)} names another`,
  );
}

/** A member as MySQL's usual *_ci collations match it: case and accents aside, trailing spaces cut. */
function sameMember(member: string, text: string): boolean {
  return member.localeCompare(text.replace(/ +$/, ''), 'en', { sensitivity: 'base' }) === 0;
}

/** The members of an ENUM or SET column, read once per column from its type text. */
const memberLists = new WeakMap<ColumnInfo, readonly string[]>();

/**
 * `enum('a','it''s','a\\b')` → a, it's, a\b: information_schema writes each member quoted, a
 * quote doubled and a backslash doubled.
 */
function membersOf(column: ColumnInfo): readonly string[] {
  let members = memberLists.get(column);
  if (members === undefined) {
    members = [...column.columnType.matchAll(/'((?:[^'\\]|''|\\.)*)'/g)].map((match) =>
      (match[1] as string).replace(/''|\\(.)/g, (_pair, escaped?: string) => escaped ?? "'"),
    );
    memberLists.set(column, members);
  }
  return members;
}

export function textValue(value: unknown, where: string): string {
  if (typeof value === 'string') return wellFormed(value, where);
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'number') return exactNumber(value, where).text;
  throw invalidValue(`${where} takes text, not ${describeValue(value)}`);
}

/** Ends like ISO 8601 with a zone: `…T10:00:00Z`, `…+02:00`. */
const ZONED = /^\d{4}-\d{2}-\d{2}[ Tt].*(?:[Zz]|[+-]\d{2}:?\d{2})$/;

/**
 * A DATETIME/TIMESTAMP value. ISO 8601 with a zone (`2024-05-01T10:00:00.250Z`, what
 * `Date.toISOString()` writes, or an offset) is stored as its UTC wall time, as a `$filter`
 * datetime literal is compared (query/temporal.ts); the session's time zone is UTC, so a
 * TIMESTAMP stores that instant. Other text goes to MySQL as it is (it reads `T` without a zone
 * as wall time, and refuses what is no date in strict mode).
 */
export function datetimeText(column: ColumnInfo, value: string, where: string): string {
  const precision = fractionDigits(column);
  if (!ZONED.test(value)) {
    const fraction = /^\d{4}-\d{2}-\d{2}[ Tt]\d{2}:\d{2}:\d{2}\.(\d+)$/.exec(value)?.[1];
    if (fraction !== undefined) checkFractionalSeconds(precision, fraction, value, where);
    return wellFormed(value, where);
  }
  const read = readTemporalText(value, 'datetime');
  if (typeof read === 'string') throw invalidValue(`${where}: ${shown(value)} is ${read}`);
  // `YYYY-MM-DD hh:mm:ss.ffffff`: the fraction kept to the column's digits once checked.
  const fraction = read.value.slice(20);
  checkFractionalSeconds(precision, fraction, value, where);
  return precision === 0 ? read.value.slice(0, 19) : read.value.slice(0, 20 + precision);
}

/**
 * DATETIME(n)/TIMESTAMP(n) keep n fractional digits; MySQL rounds more and MariaDB cuts them,
 * both without a warning, so a value with more (non-zero) digits than the column keeps is refused.
 */
function checkFractionalSeconds(
  precision: number,
  fraction: string,
  value: string,
  where: string,
): void {
  if (fraction.replace(/0+$/, '').length > precision) {
    throw invalidValue(
      `${where} keeps ${precision} digit${precision === 1 ? '' : 's'} of fractional seconds; ${shown(value)} would be ${precision === 0 ? 'cut to whole seconds' : 'cut'}`,
    );
  }
}

/** A short description of a JSON value's type for messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value === undefined) return 'missing';
  const type = typeof value;
  return type === 'object' ? 'an object' : `a ${type}`;
}

/** A value as it may appear in a message. */
function shown(value: unknown): string {
  return typeof value === 'string' ? `'${excerpt(value)}'` : String(value);
}

// The filter language's number (docs/filters.md), taken apart.
const NUMBER_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Beyond this exponent a number is out of range for every MySQL numeric type but DOUBLE. */
const MAX_EXPONENT = 400;

/**
 * A JSON number as exact decimal text, refusing one that JSON.parse may have rounded already:
 * integers beyond 2^53, and other numbers whose shortest form has more than 15 significant
 * digits (every decimal of up to 15 digits survives a double exactly; longer ones may not).
 */
function exactNumber(n: number, where: string): PlainNumber {
  // A safe integer's shortest form is already plain: optional '-', digits, no exponent (that
  // starts at 1e21) and no leading zero; -0 prints as '0'. plainNumber would give the same.
  if (Number.isSafeInteger(n)) return { text: String(n), fractionDigits: 0 };
  const text = String(n);
  const point = text.indexOf('.');
  if (point !== -1 && !text.includes('e')) {
    // A fraction between 1e-7 and 1e21 prints plain, with one '0' at most before the point and
    // no trailing zero after it: plainNumber would keep it as it is; only its digits are counted.
    let first = text.charCodeAt(0) === 45 ? 1 : 0; // '-'
    while (first < text.length && (text[first] === '0' || text[first] === '.')) first++;
    const significant = text.length - first - (first <= point ? 1 : 0);
    if (significant <= 15) return { text, fractionDigits: text.length - point - 1 };
  }
  const parts = NUMBER_TEXT.exec(text);
  if (parts === null) throw invalidValue(`${where}: ${text} is not a finite number`);
  const digits = `${parts[2]}${parts[3] ?? ''}`.replace(/^0+/, '').replace(/0+$/, '');
  if (digits.length > 15) {
    throw invalidValue(
      `${where}: the JSON number ${text} has more digits than a JSON number holds exactly; send the exact value as a string, e.g. "12345678901234567890"`,
    );
  }
  return plainNumber(text, where);
}

interface PlainNumber {
  /** `-?digits(.digits)?` without leading or trailing zeros, or `0`. */
  readonly text: string;
  readonly fractionDigits: number;
}

/** Number text (exponent allowed) → plain decimal text; throws when it is not a number. */
function plainNumber(text: string, where: string): PlainNumber {
  // Digits without a leading zero are already plain (the common case: a key from the URL).
  if (isDigitRun(text) && (text.charCodeAt(0) !== 48 || text.length === 1)) {
    return { text, fractionDigits: 0 };
  }
  const parts = NUMBER_TEXT.exec(text);
  if (parts === null) throw invalidValue(`${where} takes a number; ${shown(text)} is not one`);
  const [, sign, integer = '', fraction = '', exponentText] = parts;
  const exponent = Number(exponentText ?? 0);
  if (Math.abs(exponent) > MAX_EXPONENT) {
    throw invalidValue(`${where}: ${excerpt(text)} is out of range`);
  }
  const digits = integer + fraction;
  const point = integer.length + exponent;
  let whole: string;
  let part: string;
  if (point <= 0) {
    whole = '0';
    part = '0'.repeat(-point) + digits;
  } else if (point >= digits.length) {
    whole = digits + '0'.repeat(point - digits.length);
    part = '';
  } else {
    whole = digits.slice(0, point);
    part = digits.slice(point);
  }
  whole = whole.replace(/^0+(?=\d)/, '');
  part = part.replace(/0+$/, '');
  const zero = whole === '0' && part === '';
  return {
    text: `${zero ? '' : sign}${whole}${part === '' ? '' : `.${part}`}`,
    fractionDigits: part.length,
  };
}

/** A JSON number, numeric string or boolean as plain number text. */
function numberText(value: unknown, where: string): PlainNumber {
  if (typeof value === 'boolean') return { text: value ? '1' : '0', fractionDigits: 0 };
  if (typeof value === 'number') return exactNumber(value, where);
  if (typeof value === 'string') return plainNumber(value, where);
  throw invalidValue(`${where} takes a number, not ${describeValue(value)}`);
}

/** Whole numbers only: MySQL would round 1.5 into an INT without a word, even in strict mode. */
export function integerText(value: unknown, where: string): string {
  const number = numberText(value, where);
  if (number.fractionDigits > 0) {
    throw invalidValue(`${where} takes whole numbers; ${shown(value)} is not one`);
  }
  return number.text;
}

/** DECIMAL: exact text; `checkScale` refuses digits past the column's scale (MySQL would round them). */
export function decimalText(
  value: unknown,
  column: ColumnInfo,
  where: string,
  checkScale: boolean,
): string {
  const number = numberText(value, where);
  const scale = column.numericScale ?? 0;
  if (checkScale && number.fractionDigits > scale) {
    throw invalidValue(
      `${where} holds at most ${scale} digit${scale === 1 ? '' : 's'} after the decimal point; ${shown(value)} would be rounded`,
    );
  }
  return number.text;
}

export function floatValue(value: unknown, where: string): number {
  if (typeof value === 'number') return value;
  const n = Number(numberText(value, where).text);
  if (!Number.isFinite(n)) throw invalidValue(`${where}: ${shown(value)} is out of range`);
  return n;
}

/** BIT(n): a non-negative whole number (read back as a number, or a string beyond 2^53). */
export function bitText(value: unknown, where: string): string {
  const text = integerText(value, where);
  if (text.startsWith('-')) {
    throw invalidValue(
      `${where} is a BIT column and takes numbers from 0; ${shown(value)} is negative`,
    );
  }
  return text;
}

/** Big-endian bytes, the form BIT values are read in; MySQL refuses a value wider than the column. */
export function bitBytes(text: string): Buffer {
  let hex = BigInt(text).toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Buffer.from(hex, 'hex');
}

/**
 * The bytes of standard base64 with padding, as reads produce it; null for anything else (even a
 * stray character). A `$filter` literal for a binary column is read so too (plan/filter-types.ts).
 */
export function base64Value(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}

/** base64Value, or INVALID_VALUE naming the column. */
export function base64Bytes(text: string, where: string): Buffer {
  const bytes = base64Value(text);
  if (bytes === null) {
    throw invalidValue(
      `${where} is binary and takes standard base64 text (A–Z, a–z, 0–9, +, /, = padding); ${shown(text)} is not valid base64`,
    );
  }
  return bytes;
}

/** An unpaired surrogate (possible in JSON's \ud800 escapes) has no UTF-8 form: it would become U+FFFD. */
export function wellFormed(text: string, where: string): string {
  if (/\p{Cs}/u.test(text)) {
    throw invalidValue(
      `${where}: the text contains an unpaired UTF-16 surrogate, which UTF-8 cannot store`,
    );
  }
  return text;
}
