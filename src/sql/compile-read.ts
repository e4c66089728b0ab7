/**
 * ReadPlan → `{ sql, params }` for the SELECT of a read and for its `$count`. Names enter the
 * text only through quoteIdent (and only names the plan resolved against the schema); every value
 * is a `?` parameter shaped for mysql2's `execute` (binary protocol). Knows no HTTP.
 */
import { invalidQuery } from '../errors.js';
import type {
  PlannedColumnExpr,
  PlannedFilter,
  PlannedOperand,
  ReadPlan,
} from '../plan/read-plan.js';
import type { ColumnFn, CompareOp, FilterLiteral, Literal } from '../query/ast.js';
import { isDigitRun } from '../query/lexer.js';
import type { CompiledQuery } from './compiled-query.js';
import { quoteIdent } from './quote.js';

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

// Fixed SQL for each filter function (CONTRACT §3.1a); the request only picks an entry. A
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

/** LIMIT for `$skip` without `$top`: the largest row count MySQL accepts (its manual's own idiom). */
export const NO_LIMIT = '18446744073709551615';

/** Exact decimal placeholder: DECIMAL(65,30) holds 35 integer and 30 fraction digits. */
const DECIMAL_PLACEHOLDER = 'CAST(? AS DECIMAL(65,30))';
const DECIMAL_INTEGER_DIGITS = 35;
const DECIMAL_FRACTION_DIGITS = 30;

/**
 * The select list of a column list, kept per list: a read without `$select` uses the table's own
 * list (the same array on every request), so its text is built once per schema (issue 17).
 */
const selectLists = new WeakMap<ReadPlan['columns'], string>();

function selectList(columns: ReadPlan['columns']): string {
  let text = selectLists.get(columns);
  if (text === undefined) {
    text = columns.map((column) => quoteIdent(column.name)).join(', ');
    selectLists.set(columns, text);
  }
  return text;
}

export function compileRead(plan: ReadPlan): CompiledQuery {
  const params: unknown[] = [];
  const columns = selectList(plan.columns);
  let sql = `SELECT ${columns} FROM ${quoteIdent(plan.table.name)}`;
  if (plan.filter !== null) sql += ` WHERE ${compileFilter(plan.filter, params)}`;
  if (plan.orderBy.length > 0) {
    const order = plan.orderBy.map(
      ({ column, direction }) =>
        `${quoteIdent(column.name)} ${direction === 'asc' ? 'ASC' : 'DESC'}`,
    );
    sql += ` ORDER BY ${order.join(', ')}`;
  }
  // LIMIT values go as strings: mysql2 sends a JS number as DOUBLE, which MySQL 8.0.22+ rejects
  // in LIMIT ("Incorrect arguments to mysqld_stmt_execute"); a string is accepted by MySQL and MariaDB.
  if (plan.top !== null) {
    sql += ' LIMIT ?';
    params.push(String(plan.top));
  } else if (plan.skip !== null) {
    sql += ` LIMIT ${NO_LIMIT}`;
  }
  if (plan.skip !== null) {
    sql += ' OFFSET ?';
    params.push(String(plan.skip));
  }
  return { sql, params };
}

/** `SELECT COUNT(*)` of the rows the filter matches, ignoring order, `$top` and `$skip`. */
export function compileCount(plan: ReadPlan): CompiledQuery {
  const params: unknown[] = [];
  let sql = `SELECT COUNT(*) FROM ${quoteIdent(plan.table.name)}`;
  if (plan.filter !== null) sql += ` WHERE ${compileFilter(plan.filter, params)}`;
  return { sql, params };
}

/**
 * A filter as a SQL condition, pushing its parameters onto `params` in text order. `and`, `or`
 * and `not` are always parenthesised so precedence never depends on MySQL's (or on the
 * HIGH_NOT_PRECEDENCE sql_mode).
 */
export function compileFilter(filter: PlannedFilter, params: unknown[]): string {
  switch (filter.kind) {
    case 'or':
    case 'and': {
      if (filter.items.length === 0) return filter.kind === 'and' ? '(1 = 1)' : '(1 = 0)';
      const parts = filter.items.map((item) => compileFilter(item, params));
      return `(${parts.join(filter.kind === 'and' ? ' AND ' : ' OR ')})`;
    }
    case 'not': {
      const inner = compileFilter(filter.expr, params);
      const grouped = ['or', 'and', 'not'].includes(filter.expr.kind);
      return grouped ? `(NOT ${inner})` : `(NOT (${inner}))`;
    }
    case 'compare': {
      const left = compileOperand(filter.left, params);
      const right = compileOperand(filter.right, params);
      return `${left} ${COMPARE_SQL[filter.op]} ${right}`;
    }
    case 'isNull': {
      const operand = compileOperand(filter.operand, params);
      return `${operand} ${filter.negated ? 'IS NOT NULL' : 'IS NULL'}`;
    }
    case 'in': {
      const column = compileColumnExpr(filter.column);
      if (filter.values.length === 0) return filter.orNull ? `${column} IS NULL` : '(1 = 0)';
      const list = filter.values.map((value) => compileFilterValue(value, params)).join(', ');
      const membership = `${column} IN (${list})`;
      return filter.orNull ? `(${membership} OR ${column} IS NULL)` : membership;
    }
    case 'match': {
      // An explicit `!` escape instead of LIKE's default `\`: spelling a backslash in SQL text
      // (`ESCAPE '\\'`) depends on sql_mode NO_BACKSLASH_ESCAPES, `'!'` reads the same in every
      // mode. With it a backslash in the value is an ordinary character. LIKE follows the
      // column's collation, so with the usual *_ci collations the match is case-insensitive.
      const escaped = filter.value.replace(/[!%_]/g, '!$&');
      const pattern =
        filter.fn === 'contains'
          ? `%${escaped}%`
          : filter.fn === 'startswith'
            ? `${escaped}%`
            : `%${escaped}`;
      params.push(pattern);
      return `${compileColumnExpr(filter.column)} LIKE ? ESCAPE '!'`;
    }
  }
}

function compileOperand(operand: PlannedOperand | FilterLiteral, params: unknown[]): string {
  return operand.kind === 'column' || operand.kind === 'call'
    ? compileColumnExpr(operand)
    : compileFilterValue(operand, params);
}

/** A column, or a fixed SQL function of one: `LOWER(`name`)`. */
function compileColumnExpr(expr: PlannedColumnExpr): string {
  const column = quoteIdent(expr.column.name);
  return expr.kind === 'column' ? column : `${FN_SQL[expr.fn]}(${column})`;
}

/** A filter value: a date/time literal as a CAST placeholder, anything else as compileValue. */
function compileFilterValue(literal: FilterLiteral, params: unknown[]): string {
  switch (literal.kind) {
    case 'date':
    case 'datetime':
    case 'timeofday':
      params.push(literal.value);
      return TEMPORAL_PLACEHOLDER[literal.kind];
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
  // Up to 15 digits is a safe integer, and what the rule below makes of it (issue 17: ids).
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
