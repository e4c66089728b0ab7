/**
 * The text-like column kinds (docs/types.md): character strings, and TIME, ENUM and SET among
 * them (their data type tells them apart); JSON columns, whose text is JSON; binary strings as
 * base64.
 */
import { CHARACTER_TYPES, type ColumnInfo, fractionDigits } from '../db/schema-types.js';
import { invalidValue } from '../errors.js';
import { type ColumnKind, keptKey } from './column-kind.js';
import { base64, safeJson, safeText, text } from './csv-text.js';
import {
  binaryBody,
  binaryEdm,
  binaryValue,
  jsonBody,
  jsonValue,
  sameValue,
  stringEdm,
  timeEdm,
} from './edm.js';
import {
  decoded,
  quoteString,
  temporalText,
  temporalWriter,
  textWriter,
  writeBinary,
  writeJson,
  writeString,
} from './json-text.js';
import { integerKeyValue, integerParameter, TEMPORAL, textKeyValue } from './seek-values.js';
import { temporalTokenSql } from './time-kinds.js';
import { base64Bytes, checkMember, describeValue, textValue, wellFormed } from './write-values.js';

const TIME_PATTERN = '^-?[0-9]{2,3}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,6})?$';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Character strings, and ENUM and SET, which compare as their text. */
const TEXT_TYPES: ReadonlySet<string> = new Set([...CHARACTER_TYPES, 'enum', 'set']);

/**
 * The types a page continues after as they sort: text under the column's collation, TIME as a
 * time, ENUM and SET by their numbers (sql/compile-seek.ts). Anything else of the kind pages
 * by count.
 */
const SEEKABLE_TYPES: ReadonlySet<string> = new Set([...CHARACTER_TYPES, 'time', 'enum', 'set']);

/** `enum('a','it''s')` → ['a', "it's"]; information_schema doubles a quote inside a member. */
export function enumMembers(columnType: string): string[] {
  const body = /^(?:enum|set)\((.*)\)$/is.exec(columnType.trim())?.[1] ?? '';
  return [...body.matchAll(/'((?:[^']|'')*)'/g)].map((m) => (m[1] ?? '').replaceAll("''", "'"));
}

function byteLength(value: string | number | Buffer): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number') return String(value).length;
  return value.length;
}

/** A value within the column's declared length is stored as it is, never cut with a warning. */
function fits(column: ColumnInfo, value: string | number | Buffer): boolean {
  return column.maxLength !== null && byteLength(value) <= column.maxLength;
}

const isTime = (column: ColumnInfo): boolean => column.dataType === 'time';

/** ENUM and SET: a list of members, which they sort by the numbers of (the index, the bits). */
const hasMembers = (column: ColumnInfo): boolean =>
  column.dataType === 'enum' || column.dataType === 'set';

/** A key given in the path goes to MySQL as its text. */
const textKey: ColumnKind['key'] = (_column, _given, text, where) => ({
  kind: 'value',
  value: wellFormed(text, where),
});

export const stringKind: ColumnKind = {
  edm: {
    type: (column) => (isTime(column) ? timeEdm(column) : stringEdm(column)),
    value: sameValue,
    body: null,
  },
  readSql: (ref) => ref,
  tokenSql: (ref, column, flavour) =>
    isTime(column) ? temporalTokenSql(ref, column, flavour) : ref,
  json: (column) => (isTime(column) ? temporalWriter(fractionDigits(column), false) : writeString),
  jsonToken: (column) =>
    isTime(column)
      ? textWriter(temporalWriter(fractionDigits(column), false))
      : (t) =>
          (t as string).includes('\\') ? quoteString(JSON.parse(t as string)) : (t as string),
  csv: (column, formulas) => {
    // A TIME is digits, colons and a sign (a negative one is no formula), with its n digits.
    if (isTime(column)) return temporalText(fractionDigits(column), false);
    return formulas === 'escape' ? safeText : text;
  },
  schema: (column) => {
    const type = column.columnType;
    if (column.dataType === 'enum') {
      return { type: 'string', enum: enumMembers(type), description: type };
    }
    if (column.dataType === 'set') {
      return { type: 'string', description: `${type}; members separated by commas` };
    }
    if (isTime(column)) return { type: 'string', pattern: TIME_PATTERN, description: type };
    const bounded = column.dataType === 'char' || column.dataType === 'varchar';
    return {
      type: 'string',
      ...(bounded && column.maxLength !== null ? { maxLength: column.maxLength } : {}),
      description: type,
    };
  },
  takesObjects: false,
  write: (column, value, where) => {
    const text = textValue(value, where);
    if (hasMembers(column)) checkMember(column, text, where);
    return text;
  },
  key: textKey,
  notAKey: null,
  // A VARCHAR(3) takes 'abc  ' as 'abc' with Note 1265: only a value that fits is sure. The
  // UTF-8 byte length bounds the length in characters, and in bytes for TEXT types (whose
  // CHARACTER_MAXIMUM_LENGTH is in bytes). TIME, ENUM, SET and others keep the transaction.
  storesExactly: (column, value) => CHARACTER_TYPES.has(column.dataType) && fits(column, value),
  // A TIME key given as text might be read with a "truncated" warning.
  keyIsExact: (column) => CHARACTER_TYPES.has(column.dataType),
  // CHAR drops trailing spaces when stored (so a NO PAD collation would not find 'a ' at 'a');
  // other text compares under the column's collation, PAD SPACE or not alike.
  storedKey: (column, value) =>
    column.dataType === 'char' && typeof value === 'string' ? value.replace(/ +$/, '') : value,
  castTarget: (column) => {
    if (!isTime(column)) return null;
    const digits = fractionDigits(column);
    return digits > 0 ? `TIME(${digits})` : 'TIME';
  },
  filterType: (column) => {
    if (isTime(column)) return 'time';
    return TEXT_TYPES.has(column.dataType) ? 'text' : 'other';
  },
  filterable: true,
  seekable: (column) => SEEKABLE_TYPES.has(column.dataType),
  sortsByNumber: hasMembers,
  seekPlaceholder: (column) => (isTime(column) ? 'CAST(? AS TIME(6))' : '?'),
  // An ENUM's or SET's number from keyExpression (sql/compile-seek.ts).
  seekValue: (column, value) =>
    hasMembers(column) ? integerKeyValue(column, value) : String(value),
  seekParameter: (column, value) => {
    if (hasMembers(column)) return integerParameter(value, true);
    if (typeof value !== 'string') return undefined;
    return !isTime(column) || TEMPORAL.test(value) ? value : undefined;
  },
  keyAsNumber: false,
  rowImageKey: false,
  userIndex: (column) => (isTime(column) ? null : 'text'),
  userEquals: 'text',
  policyEquals: true,
  aggregates: 'order',
  sumType: 'integer',
  width: 'declared',
};

export const jsonKind: ColumnKind = {
  edm: { type: () => ({ name: 'Edm.String' }), value: jsonValue, body: jsonBody },
  readSql: (ref) => ref,
  tokenSql: (ref) => `CAST(${ref} AS CHAR)`,
  json: () => writeJson,
  // The column's text, itself JSON.
  jsonToken: () => (t) => decoded(t as string),
  csv: (_column, formulas) => (formulas === 'escape' ? safeJson : text),
  schema: () => ({ description: 'JSON: any JSON value' }),
  // null is SQL NULL (types/value-codec.ts); every other JSON value is the column's text.
  takesObjects: true,
  write: (_column, value) => JSON.stringify(value),
  key: textKey,
  notAKey: 'JSON',
  storesExactly: fits,
  keyIsExact: () => false,
  storedKey: keptKey,
  // MySQL's JSON type; on MariaDB a JSON parameter is LONGTEXT and never has this kind.
  castTarget: () => 'JSON',
  filterType: () => 'other',
  filterable: true,
  seekable: () => false,
  sortsByNumber: () => false,
  seekPlaceholder: () => '?',
  seekValue: textKeyValue,
  seekParameter: () => undefined,
  keyAsNumber: false,
  rowImageKey: false,
  userIndex: () => null,
  userEquals: null,
  policyEquals: true,
  aggregates: 'group',
  sumType: 'integer',
  width: 'unbounded',
};

export const binaryKind: ColumnKind = {
  edm: { type: binaryEdm, value: binaryValue, body: binaryBody },
  readSql: (ref) => ref,
  tokenSql: (ref) => `TO_BASE64(${ref})`,
  json: () => writeBinary,
  // TO_BASE64 breaks its text into lines of 76 characters (`\n` in the token).
  jsonToken: () => (t) => (t as string).replaceAll('\\n', ''),
  csv: () => (value) => (Buffer.isBuffer(value) ? base64(value) : text(value)),
  schema: (column) => ({
    type: 'string',
    contentEncoding: 'base64',
    description: `${column.columnType}; base64`,
  }),
  takesObjects: false,
  write: (_column, value, where) => {
    if (typeof value !== 'string') {
      throw invalidValue(`${where} is binary and takes base64 text, not ${describeValue(value)}`);
    }
    return base64Bytes(value, where);
  },
  key: (_column, _given, text, where) => ({ kind: 'value', value: base64Bytes(text, where) }),
  notAKey: null,
  storesExactly: fits,
  keyIsExact: () => true,
  // BINARY(n) is stored padded with zero bytes to n.
  storedKey: (column, value) =>
    column.dataType === 'binary' &&
    Buffer.isBuffer(value) &&
    column.maxLength !== null &&
    value.length < column.maxLength
      ? Buffer.concat([value, Buffer.alloc(column.maxLength - value.length)])
      : value,
  castTarget: () => 'BINARY',
  filterType: () => 'binary',
  filterable: true,
  seekable: () => true,
  sortsByNumber: () => false,
  seekPlaceholder: () => '?',
  seekValue: (_column, value) =>
    (Buffer.isBuffer(value) ? value : Buffer.from(String(value))).toString('base64'),
  seekParameter: (_column, value) =>
    typeof value === 'string' && BASE64.test(value) ? Buffer.from(value, 'base64') : undefined,
  keyAsNumber: false,
  rowImageKey: false,
  userIndex: () => null,
  userEquals: null,
  policyEquals: true,
  aggregates: 'group',
  sumType: 'integer',
  width: 'declared',
};
