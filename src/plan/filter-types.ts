/**
 * The type rules of docs/filters.md, checked once names are resolved: which columns a function
 * takes (`year` a date, `tolower` text…) and what it gives, and which operands a date, datetime
 * or time-of-day literal may meet, and which quoted strings a number, date or time may meet (only
 * a valid value of its type: MySQL would read 'abc' as 0 and 'yesterday' as no date, silently).
 * A mismatch is a FILTER_TYPE 400 that names the column. A spatial column cannot be filtered;
 * a binary one meets a quoted string as the base64 reads show it in, and no text match.
 */
import type { ColumnInfo } from '../db/schema-types.js';
import { filterType } from '../errors.js';
import type { ColumnFn, MatchFn, NonNullLiteral, TemporalLiteral } from '../query/ast.js';
import { excerpt } from '../query/lexer.js';
import { readTemporalText } from '../query/temporal.js';
import type { ValueType } from '../types/column-kind.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import { base64Value } from '../types/write-values.js';
import type { PlannedLiteral } from './nodes.js';

export type { ValueType } from '../types/column-kind.js';

/** What the rules take a column's values for: its kind's (types/kinds.ts). */
export function columnType(column: ColumnInfo): ValueType {
  return COLUMN_KINDS[column.kind].filterType(column);
}

export interface FnRule {
  readonly takes: readonly ValueType[];
  readonly gives: ValueType;
  /** For the error message: "`year` takes …". */
  readonly takesText: string;
}

const TEXT: FnRule = { takes: ['text'], gives: 'text', takesText: 'a text column' };
const DATE_PART: FnRule = {
  takes: ['date', 'datetime'],
  gives: 'number',
  takesText: 'a DATE, DATETIME or TIMESTAMP column',
};
const TIME_PART: FnRule = {
  takes: ['datetime', 'time'],
  gives: 'number',
  takesText: 'a DATETIME, TIMESTAMP or TIME column',
};

export const FN_RULES: Readonly<Record<ColumnFn, FnRule>> = {
  tolower: TEXT,
  toupper: TEXT,
  trim: TEXT,
  length: { ...TEXT, gives: 'number' },
  year: DATE_PART,
  month: DATE_PART,
  day: DATE_PART,
  hour: TIME_PART,
  minute: TIME_PART,
  second: TIME_PART,
  date: { ...DATE_PART, gives: 'date' },
};

const TYPE_NAMES: Readonly<Record<ValueType, string>> = {
  text: 'text',
  number: 'a number',
  date: 'a date',
  datetime: 'a datetime',
  time: 'a time',
  binary: 'binary',
  other: 'neither text, a number nor a date or time',
};

/** A column as the user wrote it, with its MySQL type: `column 'name' (varchar)`. */
function columnLabel(column: ColumnInfo): string {
  return `column '${column.name}' (${column.dataType})`;
}

/** Throws FILTER_TYPE when `column` is not of a type `fn` takes. */
export function checkCall(fn: ColumnFn, column: ColumnInfo, position: number): void {
  const rule = FN_RULES[fn];
  if (!rule.takes.includes(columnType(column))) {
    throw filterType(
      `Invalid $filter at position ${position}: ${fn}() takes ${rule.takesText}, and ${columnLabel(column)} is not one`,
    );
  }
}

/** The operand a literal meets: its type and how to name it in a message. */
export interface Described {
  readonly type: ValueType;
  readonly label: string;
}

export function describeColumn(column: ColumnInfo): Described {
  return { type: columnType(column), label: columnLabel(column) };
}

/** `fn(column)` as an operand: the type `fn` gives. */
export function describeCall(fn: ColumnFn, column: ColumnInfo): Described {
  return { type: FN_RULES[fn].gives, label: `${fn}(${column.name}) on ${columnLabel(column)}` };
}

/** A plain (non-null) literal meeting a date/time literal, as `the string 'x'` / `the number 5`. */
export function describeLiteral(literal: PlannedLiteral): Described {
  switch (literal.kind) {
    case 'binary':
      return { type: 'binary', label: `the bytes '${excerpt(literal.text)}'` };
    case 'string':
      return { type: 'text', label: `the string '${excerpt(literal.value)}'` };
    case 'number':
      return { type: 'number', label: `the number ${excerpt(literal.text)}` };
    case 'boolean':
      return { type: 'number', label: `the value ${literal.value}` };
    case 'user':
      return { type: 'text', label: `@user.${literal.field}` };
    default:
      return {
        type: literalType(literal),
        label: `the ${LITERAL_NAMES[literal.kind]} ${literal.text}`,
      };
  }
}

const LITERAL_NAMES: Readonly<Record<TemporalLiteral['kind'], string>> = {
  date: 'date',
  datetime: 'datetime',
  timeofday: 'time of day',
};

/** The types a literal of each kind is compared with. */
const LITERAL_PARTNERS: Readonly<Record<TemporalLiteral['kind'], readonly ValueType[]>> = {
  date: ['date', 'datetime'],
  datetime: ['date', 'datetime'],
  timeofday: ['time'],
};

const PARTNER_TEXT: Readonly<Record<TemporalLiteral['kind'], string>> = {
  date: 'a DATE, DATETIME or TIMESTAMP column or date()',
  datetime: 'a DATE, DATETIME or TIMESTAMP column or date()',
  timeofday: 'a TIME column',
};

/** The type a temporal literal stands for, for checks against another literal. */
export function literalType(literal: TemporalLiteral): ValueType {
  return literal.kind === 'timeofday' ? 'time' : literal.kind;
}

/** Throws FILTER_TYPE unless a date/time `literal` may be compared with `other`. */
export function checkTemporal(literal: TemporalLiteral, other: Described, position: number): void {
  if (LITERAL_PARTNERS[literal.kind].includes(other.type)) return;
  throw filterType(
    `Invalid $filter at position ${position}: the ${LITERAL_NAMES[literal.kind]} ${literal.text} cannot be compared with ${other.label}, which is ${TYPE_NAMES[other.type]}; a ${LITERAL_NAMES[literal.kind]} is compared with ${PARTNER_TEXT[literal.kind]}`,
  );
}

/** contains/startswith/endswith on a function need text from it: `contains(year(x),'2')` is a 400. */
export function checkMatchCall(matchFn: MatchFn, call: Described, position: number): void {
  if (call.type === 'text') return;
  throw filterType(
    `Invalid $filter at position ${position}: ${matchFn}() needs text, and ${call.label} gives ${TYPE_NAMES[call.type]}`,
  );
}

/**
 * contains/startswith/endswith on a binary column: its bytes are no text, and a part of their
 * base64 is not the base64 of a part of them.
 */
export function checkMatchColumn(matchFn: MatchFn, column: ColumnInfo, position: number): void {
  if (columnType(column) !== 'binary') return;
  throw filterType(
    `Invalid $filter at position ${position}: ${matchFn}() needs text, and ${columnLabel(column)} is binary: compare it whole, by its base64 text, with eq, ne or in`,
  );
}

/** The filter language's number (docs/filters.md), the only text a quoted number may hold. */
const NUMBER_TEXT = /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A quoted string compared with `other`: for a number, date or time, the literal of that type it
 * spells (`'5'` is the number 5, `'2024-05-01T10:00:00Z'` a datetime in UTC, as a write takes
 * it); for a binary column, the bytes its base64 spells (`'AAEC'`, as a read shows them: the
 * write codec's rule); else a FILTER_TYPE 400; for anything else the string itself.
 */
export function typedString(
  literal: Extract<NonNullLiteral, { kind: 'string' }>,
  other: Described,
  position: number,
): PlannedLiteral {
  const { value } = literal;
  let problem: string;
  switch (other.type) {
    case 'number':
      if (NUMBER_TEXT.test(value)) return { kind: 'number', text: value };
      problem = 'not a number';
      break;
    case 'date':
    case 'datetime':
    case 'time': {
      const read = readTemporalText(value, other.type === 'time' ? 'time' : 'datetime');
      if (typeof read !== 'string') return { kind: read.kind, text: read.text, value: read.value };
      problem = read;
      break;
    }
    case 'binary': {
      const bytes = base64Value(value);
      if (bytes !== null) return { kind: 'binary', text: value, value: bytes };
      problem =
        'not standard base64 (A–Z, a–z, 0–9, +, /, = padding), the form reads show binary values in';
      break;
    }
    default:
      return literal;
  }
  throw filterType(
    `Invalid $filter at position ${position}: the string '${excerpt(value)}' cannot be compared with ${other.label}, which is ${TYPE_NAMES[other.type]}: it is ${problem}`,
  );
}

/** Throws FILTER_TYPE for a spatial column: MySQL compares geometries as bytes, never as shapes. */
export function checkFilterable(column: ColumnInfo, position: number): void {
  if (COLUMN_KINDS[column.kind].filterable) return;
  throw filterType(
    `Invalid $filter at position ${position}: ${columnLabel(column)} is spatial and cannot be filtered (only 'eq null' and 'ne null' test it)`,
  );
}
