/**
 * A planned filter → a SQL condition, its parameters pushed in text order. Fixed SQL for every
 * operator and function (the request only picks an entry), values only as `?`, names only
 * through quoteIdent. A lambda over a to-many relation becomes EXISTS over its related rows;
 * a policy's `@user` value is compared byte for byte (compareUser says why).
 */

import type { ServerKind } from '../db/pool.js';
import type { ColumnInfo } from '../db/schema-types.js';
import { invalidQuery } from '../errors.js';
import type {
  BinaryLiteral,
  Join,
  PlannedColumnExpr,
  PlannedFilter,
  PlannedOperand,
  Source,
} from '../plan/nodes.js';
import type { ColumnFn, CompareOp, FilterLiteral, Literal, UserParameter } from '../query/ast.js';
import { isDigitRun } from '../query/lexer.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import { quoteIdent } from './quote.js';
import { likePattern, userValue } from './user-values.js';

/** How names are written: bare (one table), or qualified by their source's alias. */
export interface SqlContext {
  readonly qualify: boolean;
  readonly flavour: ServerKind['flavour'];
}

export const UNQUALIFIED: SqlContext = { qualify: false, flavour: 'mariadb' };

// `ne` is `<>`: like every SQL comparison it is never true when either side is NULL, so
// `x ne 5` does not match rows where x is NULL (write `x ne 5 or x eq null` for those).
const COMPARE_SQL: Readonly<Record<CompareOp, string>> = {
  eq: '=',
  ne: '<>',
  lt: '<',
  le: '<=',
  gt: '>',
  ge: '>=',
};

// Fixed SQL for each filter function (docs/filters.md); the request only picks an entry. A
// function on a column hides the column from its index: MySQL evaluates it on every row.
export const FN_SQL: Readonly<Record<ColumnFn, string>> = {
  tolower: 'LOWER',
  toupper: 'UPPER',
  trim: 'TRIM',
  length: 'CHAR_LENGTH',
  year: 'YEAR',
  month: 'MONTH',
  day: 'DAYOFMONTH',
  hour: 'HOUR',
  minute: 'MINUTE',
  second: 'SECOND',
  date: 'DATE',
};

// Date/time literals go as strings inside an explicit CAST, so MySQL compares them as temporal
// values (never as text) whatever the other side is: a DATE meeting a DATETIME is that day at
// 00:00:00 (MySQL manual, "Conversion Between Date and Time Types"). The session runs
// time_zone '+00:00', so a TIMESTAMP is compared as UTC wall time; DATETIME(6) and TIME(6)
// keep every microsecond the lexer accepted.
const TEMPORAL_PLACEHOLDER = {
  date: 'CAST(? AS DATE)',
  datetime: 'CAST(? AS DATETIME(6))',
  timeofday: 'CAST(? AS TIME(6))',
} as const;

/** Exact decimal placeholder: DECIMAL(65,30) holds 35 integer and 30 fraction digits. */
const DECIMAL_PLACEHOLDER = 'CAST(? AS DECIMAL(65,30))';
const DECIMAL_INTEGER_DIGITS = 35;
const DECIMAL_FRACTION_DIGITS = 30;

/**
 * A filter as a SQL condition, pushing its parameters onto `params` in text order. `and`, `or`
 * and `not` are always parenthesised so precedence never depends on MySQL's (or on the
 * HIGH_NOT_PRECEDENCE sql_mode).
 */
export function compileFilter(
  filter: PlannedFilter,
  params: unknown[],
  context: SqlContext = UNQUALIFIED,
): string {
  switch (filter.kind) {
    case 'or':
    case 'and': {
      if (filter.items.length === 0) return filter.kind === 'and' ? '(1 = 1)' : '(1 = 0)';
      const parts = filter.items.map((item) => compileFilter(item, params, context));
      return `(${parts.join(filter.kind === 'and' ? ' AND ' : ' OR ')})`;
    }
    case 'not': {
      const inner = compileFilter(filter.expr, params, context);
      const grouped = ['or', 'and', 'not'].includes(filter.expr.kind);
      return grouped ? `(NOT ${inner})` : `(NOT (${inner}))`;
    }
    case 'compare': {
      if (filter.left.kind === 'user' || filter.right.kind === 'user') {
        return compareUser(filter.op, filter.left, filter.right, params, context);
      }
      const left = compileOperand(filter.left, params, context);
      const right = compileOperand(filter.right, params, context);
      return `${left} ${COMPARE_SQL[filter.op]} ${right}`;
    }
    case 'isNull': {
      const operand = compileOperand(filter.operand, params, context);
      return `${operand} ${filter.negated ? 'IS NOT NULL' : 'IS NULL'}`;
    }
    case 'in':
      return compileIn(filter, params, context);
    case 'match': {
      // An explicit `!` escape instead of LIKE's default `\`: spelling a backslash in SQL text
      // (`ESCAPE '\\'`) depends on sql_mode NO_BACKSLASH_ESCAPES, `'!'` reads the same in every
      // mode. With it a backslash in the value is an ordinary character. LIKE follows the
      // column's collation, so with the usual *_ci collations the match is case-insensitive;
      // a caller's `@user` value matches byte for byte (a binary pattern: compareUser says why).
      const column = compileColumnExpr(filter.column, context);
      if (typeof filter.value !== 'string') {
        params.push(userValue(filter.value.field, filter.fn));
        return `${column} LIKE CAST(? AS BINARY) ESCAPE '!'`;
      }
      params.push(likePattern(filter.fn, filter.value));
      return `${column} LIKE ? ESCAPE '!'`;
    }
    case 'related':
      return compileRelated(filter, params, context);
  }
}

function compileIn(
  filter: Extract<PlannedFilter, { kind: 'in' }>,
  params: unknown[],
  context: SqlContext,
): string {
  const column = compileColumnExpr(filter.column, context);
  const plain = filter.values.filter((value) => value.kind !== 'user');
  const users = filter.values.filter((value): value is UserParameter => value.kind === 'user');
  const alternatives: string[] = [];
  if (plain.length > 0) {
    const list = plain.map((value) => compileFilterValue(value, params)).join(', ');
    alternatives.push(`${column} IN (${list})`);
  }
  for (const user of users) {
    alternatives.push(compareUser('eq', filter.column, user, params, context));
  }
  if (filter.orNull) alternatives.push(`${column} IS NULL`);
  if (alternatives.length === 0) return '(1 = 0)';
  return alternatives.length === 1 ? (alternatives[0] as string) : `(${alternatives.join(' OR ')})`;
}

/**
 * A comparison with a caller's `@user` value, byte for byte: under a column's collation
 * `alicé@shop.test` equals `alice@shop.test` and PAD SPACE makes `'alice@shop.test '` equal
 * too, and MySQL reads a non-numeric text compared with a number as 0. So the column's text is
 * compared with the value as a binary string (`CAST(x AS CHAR) = CAST(? AS BINARY)`: no
 * collation, no padding). For `eq` on a text or integer column an ordinary comparison comes
 * first, so an index on the column still finds the rows (the integer one gets NULL unless the
 * value is an integer: sql/user-values.ts).
 */
function compareUser(
  op: CompareOp,
  left: PlannedOperand | FilterLiteral,
  right: PlannedOperand | FilterLiteral,
  params: unknown[],
  context: SqlContext,
): string {
  const userOnLeft = left.kind === 'user';
  const user = (userOnLeft ? left : right) as UserParameter;
  const other = userOnLeft ? right : left;
  const sqlOp = COMPARE_SQL[op];
  if (other.kind !== 'column' && other.kind !== 'call') {
    const a = `CAST(${compileOperand(left, params, context)} AS BINARY)`;
    const b = `CAST(${compileOperand(right, params, context)} AS BINARY)`;
    return `${a} ${sqlOp} ${b}`;
  }
  const expr = compileColumnExpr(other, context);
  const exact = userOnLeft
    ? `CAST(? AS BINARY) ${sqlOp} CAST(${expr} AS CHAR)`
    : `CAST(${expr} AS CHAR) ${sqlOp} CAST(? AS BINARY)`;
  const indexable = op === 'eq' ? indexableKind(other) : null;
  if (indexable === null) {
    params.push(userValue(user.field));
    return exact;
  }
  params.push(userValue(user.field, indexable), userValue(user.field));
  return `(${expr} = ? AND ${exact})`;
}

/** How a caller's value meets an expression in an ordinary `=` that an index can serve. */
function indexableKind(expr: PlannedColumnExpr): 'text' | 'integer' | null {
  if (expr.kind !== 'column') return null;
  return COLUMN_KINDS[expr.column.kind].userIndex(expr.column);
}

/**
 * `EXISTS` over the related rows of the parent row: some row satisfies the condition (`any`),
 * or none fails it (`all`: NOT EXISTS a row whose condition is not TRUE, NULL counting as not).
 */
function compileRelated(
  filter: Extract<PlannedFilter, { kind: 'related' }>,
  params: unknown[],
  context: SqlContext,
): string {
  const { rows, condition } = filter;
  const inner: SqlContext = { qualify: true, flavour: context.flavour };
  let sql = `SELECT 1 FROM ${aliased(rows.source)}`;
  sql += joinClauses(rows.joins, params, inner);
  const parts = rows.relation.on.map(
    ({ local, remote }) => `${qualified(rows.source, remote)} = ${qualified(rows.parent, local)}`,
  );
  if (rows.filter !== null) parts.push(compileFilter(rows.filter, params, inner));
  if (condition !== null) {
    const test = compileFilter(condition, params, inner);
    parts.push(filter.op === 'any' ? test : `(${test}) IS NOT TRUE`);
  }
  sql += ` WHERE ${parts.join(' AND ')}`;
  return filter.op === 'any' ? `EXISTS (${sql})` : `NOT EXISTS (${sql})`;
}

/**
 * `LEFT JOIN <target> AS tN ON <key pairs> AND (<filter>) IS TRUE` per join: a missing related
 * row is all NULLs. A join whose filter walks paths of its own holds their joins in parentheses,
 * so that its ON condition may read them. The filter is wrapped in IS TRUE (the same rows: ON
 * keeps only TRUE) so that MariaDB never reads the related table as a constant from it: a
 * filter comparing the related key with a value (`id eq 4`) made MariaDB 10.11 do so and, in a
 * correlated subquery (an expanded to-many relation), answer NULL for the related row's
 * nullable columns once a parent row before it had no match. The key pairs still find the row
 * by its index.
 */
export function joinClauses(
  joins: readonly Join[],
  params: unknown[],
  context: SqlContext,
): string {
  let sql = '';
  for (const join of joins) {
    const on = join.relation.on.map(
      ({ local, remote }) => `${qualified(join.source, remote)} = ${qualified(join.parent, local)}`,
    );
    const target =
      join.nested.length === 0
        ? aliased(join.source)
        : `(${aliased(join.source)}${joinClauses(join.nested, params, context)})`;
    if (join.filter !== null) {
      const test = compileFilter(join.filter, params, context);
      // and, or and not come parenthesised already.
      const grouped =
        join.filter.kind === 'and' || join.filter.kind === 'or' || join.filter.kind === 'not';
      on.push(`${grouped ? test : `(${test})`} IS TRUE`);
    }
    sql += ` LEFT JOIN ${target} ON ${on.join(' AND ')}`;
  }
  return sql;
}

function aliased(source: Source): string {
  return `${quoteIdent(source.table.name)} AS ${quoteIdent(source.alias)}`;
}

function qualified(source: Source, column: ColumnInfo): string {
  return `${quoteIdent(source.alias)}.${quoteIdent(column.name)}`;
}

function compileOperand(
  operand: PlannedOperand | FilterLiteral,
  params: unknown[],
  context: SqlContext,
): string {
  return operand.kind === 'column' || operand.kind === 'call'
    ? compileColumnExpr(operand, context)
    : compileFilterValue(operand, params);
}

/** A column, or a fixed SQL function of one: `LOWER(`name`)`. */
export function compileColumnExpr(expr: PlannedColumnExpr, context: SqlContext): string {
  const column = expr.kind === 'column' ? expr : expr.arg;
  const name = quoteIdent(column.column.name);
  const ref = context.qualify ? `${quoteIdent(column.source.alias)}.${name}` : name;
  return expr.kind === 'column' ? ref : `${FN_SQL[expr.fn]}(${ref})`;
}

/**
 * A filter value: a date/time literal as a CAST placeholder, a binary column's as its bytes,
 * anything else as compileValue.
 */
function compileFilterValue(literal: FilterLiteral | BinaryLiteral, params: unknown[]): string {
  switch (literal.kind) {
    case 'binary':
      params.push(literal.value);
      return '?';
    case 'date':
    case 'datetime':
    case 'timeofday':
      params.push(literal.value);
      return TEMPORAL_PLACEHOLDER[literal.kind];
    case 'user':
      params.push(userValue(literal.field));
      return '?';
    default:
      return compileValue(literal, params);
  }
}

/**
 * One literal as a placeholder, its parameter pushed onto `params`:
 * string → string; boolean → 1/0; null → null; a number → see compileNumber.
 */
export function compileValue(literal: Literal, params: unknown[]): string {
  switch (literal.kind) {
    case 'string':
      params.push(literal.value);
      return '?';
    case 'boolean':
      params.push(literal.value ? 1 : 0);
      return '?';
    case 'null':
      params.push(null);
      return '?';
    case 'number':
      return compileNumber(literal.text, params);
  }
}

/**
 * A number literal. mysql2 sends a JS number as DOUBLE, exact only up to 2^53, and MySQL
 * compares a string parameter with a number as DOUBLE too. So an exact decimal text that a
 * double cannot hold goes as a string inside CAST(… AS DECIMAL(65,30)): MySQL compares DECIMAL
 * with an integer or DECIMAL column as DECIMAL, exactly (manual, "Type Conversion in Expression
 * Evaluation"). A number with an exponent, or too many digits for DECIMAL(65,30), is a double.
 */
function compileNumber(text: string, params: unknown[]): string {
  // Up to 15 digits is a safe integer, and what the rule below makes of it (ids: the common case).
  if (text.length <= 15 && isDigitRun(text)) {
    params.push(Number(text));
    return '?';
  }
  const exact = /^-?(\d+)(?:\.(\d+))?$/.exec(text);
  if (exact !== null) {
    const integerPart = exact[1] as string;
    const fraction = exact[2];
    const value = Number(text);
    if (fraction === undefined && Number.isSafeInteger(value)) {
      params.push(value === 0 ? 0 : value); // never -0
      return '?';
    }
    // Leading and trailing zeros dropped, so the text fits DECIMAL(65,30) without a rounding note.
    const integerDigits = integerPart.replace(/^0+/, '');
    const fractionDigits = (fraction ?? '').replace(/0+$/, '');
    if (
      integerDigits.length <= DECIMAL_INTEGER_DIGITS &&
      fractionDigits.length <= DECIMAL_FRACTION_DIGITS
    ) {
      const sign = text.startsWith('-') ? '-' : '';
      const point = fractionDigits === '' ? '' : `.${fractionDigits}`;
      params.push(`${sign}${integerDigits || '0'}${point}`);
      return DECIMAL_PLACEHOLDER;
    }
  }
  const value = Number(text);
  if (!Number.isFinite(value)) {
    const shown = text.length > 40 ? `${text.slice(0, 40)}…` : text;
    throw invalidQuery(`The number ${shown} is out of range`);
  }
  params.push(value === 0 ? 0 : value);
  return '?';
}
