/**
 * fast-check generators for the read options of CONTRACT §3.1 and §3.1a, built from the grammar
 * rather than from strings: a random valid `$filter` AST (shaped exactly like the parser's
 * output, so a round trip can be compared) whose functions and date/time literals meet columns
 * of the types they take, its text in a random but valid spelling (keyword case, whitespace,
 * number forms), and random `$select`/`$orderby`/`$top`/`$skip` over a table's columns. Used by
 * the unit fuzz (parse → plan → compile) and by the MariaDB round trip.
 */
import fc from 'fast-check';
import type { TableInfo } from '../../src/db/schema-types.js';
import { columnType, type ValueType } from '../../src/plan/filter-types.js';
import type {
  ColumnExpr,
  ColumnFn,
  CompareOp,
  FilterExpr,
  FilterLiteral,
  Literal,
  MatchFn,
  Operand,
  TemporalLiteral,
} from '../../src/query/ast.js';

const OPS: readonly CompareOp[] = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'];
const FNS: readonly MatchFn[] = ['contains', 'startswith', 'endswith'];

/**
 * A name the filter grammar can spell (identifier characters only, not a keyword), of a column
 * that can be filtered (not a spatial one).
 */
export function filterableColumns(table: TableInfo): string[] {
  return table.columns
    .filter((c) => c.kind !== 'geometry')
    .map((c) => c.name)
    .filter(
      (name) =>
        /^[\p{L}\p{M}\p{N}_$]+$/u.test(name) &&
        !/^(and|or|not|in|eq|ne|lt|le|gt|ge|true|false|null)$/i.test(name) &&
        !/^-?\d/.test(name),
    );
}

/** Text that reads as a number token: integers, big integers, decimals, exponents. */
const numberText: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc
    .tuple(fc.boolean(), fc.stringMatching(/^[0-9]{1,38}$/), fc.stringMatching(/^[0-9]{1,33}$/))
    .map(([negative, int, fraction]) => `${negative ? '-' : ''}${int}.${fraction}`),
  fc
    .tuple(
      fc.boolean(),
      fc.stringMatching(/^[0-9]{1,5}(\.[0-9]{1,5})?$/),
      fc.constantFrom('e', 'E'),
      fc.constantFrom('', '+', '-'),
      fc.integer({ min: 0, max: 300 }),
    )
    .map(
      ([negative, mantissa, e, sign, exponent]) =>
        `${negative ? '-' : ''}${mantissa}${e}${sign}${exponent}`,
    ),
);

/** Strings with the characters that matter: quotes, LIKE wildcards, the escape, backslashes, any Unicode. */
const stringValue: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc
    .array(
      fc.constantFrom(
        "'",
        "''",
        '%',
        '_',
        '!',
        '\\',
        '\\%',
        ' ',
        'a',
        'é',
        '😀',
        '\u0000',
        '`',
        '"',
        '?',
      ),
      {
        maxLength: 10,
      },
    )
    .map((parts) => parts.join('')),
);

export const literalArb: fc.Arbitrary<Literal> = fc.oneof(
  { weight: 3, arbitrary: stringValue.map((value): Literal => ({ kind: 'string', value })) },
  { weight: 3, arbitrary: numberText.map((text): Literal => ({ kind: 'number', text })) },
  { weight: 1, arbitrary: fc.boolean().map((value): Literal => ({ kind: 'boolean', value })) },
  { weight: 1, arbitrary: fc.constant<Literal>({ kind: 'null' }) },
);

const nonNullLiteral = literalArb.filter((l) => l.kind !== 'null');
/** Literals any column may meet: a quoted string meets a number, date or time only if it spells one. */
const untypedLiteral = (withNull: boolean) =>
  (withNull ? literalArb : nonNullLiteral).filter((l) => l.kind !== 'string');
const quoted = (text: string): Literal => ({ kind: 'string', value: text });

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Days in a month, from JavaScript's own calendar: an oracle independent of src/query/temporal.ts. */
function daysInMonth(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}

const datePart = fc
  .tuple(
    fc.integer({ min: 1, max: 9998 }),
    fc.integer({ min: 1, max: 12 }),
    fc.integer({ min: 1, max: 31 }),
  )
  .map(([y, m, d]) => [y, m, Math.min(d, daysInMonth(y, m))] as const);
const clockPart = fc.tuple(
  fc.integer({ min: 0, max: 23 }),
  fc.integer({ min: 0, max: 59 }),
  fc.integer({ min: 0, max: 59 }),
);
/** A fraction as written: 1–6 digits, sometimes with zeros past the sixth (accepted, dropped). */
const fractionText = fc.oneof(
  fc.constant(''),
  fc
    .tuple(fc.stringMatching(/^[0-9]{1,6}$/), fc.constantFrom('', '000'))
    .map(([digits, zeros]) => digits + zeros),
);
const micros = (fraction: string) => fraction.slice(0, 6).padEnd(6, '0');

export const dateLiteralArb: fc.Arbitrary<TemporalLiteral> = datePart.map(([y, m, d]) => {
  const text = `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
  return { kind: 'date', text, value: text };
});

/** A datetime with `Z` or an offset; its `value` is computed with Date's UTC arithmetic. */
export const datetimeLiteralArb: fc.Arbitrary<TemporalLiteral> = fc
  .tuple(
    datePart,
    clockPart,
    fc.boolean(),
    fractionText,
    fc.oneof(
      fc.constantFrom('Z', 'z'),
      fc
        .tuple(
          fc.constantFrom('+', '-'),
          fc.integer({ min: 0, max: 14 }),
          fc.constantFrom(0, 30, 45),
        )
        .map(([sign, h, m]) => `${sign}${pad(h)}:${pad(m)}`),
    ),
    fc.constantFrom('T', 't'),
  )
  .map(([[y, mo, d], [h, mi, s], withSeconds, fraction, zone, t]) => {
    const seconds = withSeconds ? s : 0;
    const secondsText = withSeconds ? `:${pad(s)}${fraction === '' ? '' : `.${fraction}`}` : '';
    const text = `${pad(y, 4)}-${pad(mo)}-${pad(d)}${t}${pad(h)}:${pad(mi)}${secondsText}${zone}`;
    const offset = /^[Zz]$/.test(zone)
      ? 0
      : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4)));
    const utc = new Date(0);
    utc.setUTCFullYear(y, mo - 1, d);
    utc.setUTCHours(h, mi - offset, seconds, 0);
    const value =
      `${pad(utc.getUTCFullYear(), 4)}-${pad(utc.getUTCMonth() + 1)}-${pad(utc.getUTCDate())} ` +
      `${pad(utc.getUTCHours())}:${pad(utc.getUTCMinutes())}:${pad(utc.getUTCSeconds())}.${micros(withSeconds ? fraction : '')}`;
    return { kind: 'datetime', text, value };
  });

export const timeOfDayLiteralArb: fc.Arbitrary<TemporalLiteral> = fc
  .tuple(clockPart, fractionText)
  .map(([[h, m, s], fraction]) => {
    const clock = `${pad(h)}:${pad(m)}:${pad(s)}`;
    return {
      kind: 'timeofday',
      text: fraction === '' ? clock : `${clock}.${fraction}`,
      value: `${clock}.${micros(fraction)}`,
    };
  });

/** The functions and the column types each takes, with the type it gives (CONTRACT §3.1a). */
const FN_TYPES: readonly [ColumnFn, readonly ValueType[], ValueType][] = [
  ['tolower', ['text'], 'text'],
  ['toupper', ['text'], 'text'],
  ['trim', ['text'], 'text'],
  ['length', ['text'], 'number'],
  ['year', ['date', 'datetime'], 'number'],
  ['month', ['date', 'datetime'], 'number'],
  ['day', ['date', 'datetime'], 'number'],
  ['hour', ['datetime', 'time'], 'number'],
  ['minute', ['datetime', 'time'], 'number'],
  ['second', ['datetime', 'time'], 'number'],
  ['date', ['date', 'datetime'], 'date'],
];

/** A column or a function of one, with the type it gives. */
interface Subject {
  readonly expr: ColumnExpr;
  readonly type: ValueType;
}

/**
 * Literals that may meet a subject of this type: plain ones always (strings only where they
 * spell a value of the type), date/time ones by type, also quoted.
 */
function literalFor(type: ValueType, withNull: boolean): fc.Arbitrary<FilterLiteral> {
  const plain = untypedLiteral(withNull);
  switch (type) {
    case 'number':
      return fc.oneof(plain, numberText.map(quoted));
    case 'date':
    case 'datetime':
      return fc.oneof(
        plain,
        dateLiteralArb,
        datetimeLiteralArb,
        fc.oneof(dateLiteralArb, datetimeLiteralArb).map((literal) => quoted(literal.text)),
      );
    case 'time':
      return fc.oneof(
        plain,
        timeOfDayLiteralArb,
        timeOfDayLiteralArb.map((literal) => quoted(literal.text)),
      );
    default:
      return withNull ? literalArb : nonNullLiteral;
  }
}

/**
 * A valid filter AST over the filterable columns of `table` (positions are 0: compare with
 * `withoutPositions`). Functions are applied only to columns of a type they take, and date/time
 * literals meet only columns (or functions) of a matching type. Given only names, the columns'
 * types are unknown: no functions, no date/time literals.
 */
export function filterArb(
  source: TableInfo | readonly string[],
  maxDepth = 4,
): fc.Arbitrary<FilterExpr> {
  const typed: readonly { name: string; type: ValueType }[] =
    'columns' in source
      ? source.columns
          .filter((c) => filterableColumns(source).includes(c.name))
          .map((c) => ({ name: c.name, type: columnType(c) }))
      : source.map((name) => ({ name, type: 'other' as const }));
  const columns = typed;
  const subjects: Subject[] = [];
  for (const { name, type } of typed) {
    const ref = { kind: 'column' as const, name, position: 0 };
    subjects.push({ expr: ref, type });
    for (const [fn, takes, gives] of FN_TYPES) {
      if (takes.includes(type)) {
        subjects.push({ expr: { kind: 'call', fn, column: ref, position: 0 }, type: gives });
      }
    }
  }
  const column = fc.constantFrom(...columns).map((c) => ({
    kind: 'column' as const,
    name: c.name,
    position: 0,
  }));
  const subject = fc.constantFrom(...subjects);
  // A subject against a literal it may meet, or two plain operands (columns or plain literals).
  const typedPair: fc.Arbitrary<[Operand, Operand]> = fc
    .tuple(
      subject.chain((s) => fc.tuple(fc.constant(s.expr), literalFor(s.type, false))),
      fc.boolean(),
    )
    .map(([[expr, literal], swap]) => (swap ? [literal, expr] : [expr, literal]));
  const plainOperand: fc.Arbitrary<Operand> = fc.oneof(column, untypedLiteral(false));
  const operands = fc.oneof(
    typedPair,
    fc.tuple(plainOperand, plainOperand),
    fc.tuple(nonNullLiteral, nonNullLiteral),
  );
  const compare: fc.Arbitrary<FilterExpr> = fc.oneof(
    fc
      .tuple(fc.constantFrom(...OPS), operands)
      .map(
        ([op, [left, right]]): FilterExpr => ({ kind: 'compare', op, left, right, position: 0 }),
      ),
    // `null` only with eq/ne: with lt/le/gt/ge it is a plan error (tested on its own).
    fc
      .tuple(
        fc.constantFrom<CompareOp>('eq', 'ne'),
        fc.oneof(
          subject.map((s) => s.expr),
          literalArb,
          dateLiteralArb,
          datetimeLiteralArb,
          timeOfDayLiteralArb,
        ),
        fc.boolean(),
      )
      .map(([op, other, nullFirst]): FilterExpr => {
        const nul: Literal = { kind: 'null' };
        return {
          kind: 'compare',
          op,
          left: nullFirst ? nul : other,
          right: nullFirst ? other : nul,
          position: 0,
        };
      }),
  );
  const membership: fc.Arbitrary<FilterExpr> = subject.chain((s) =>
    fc.record({
      kind: fc.constant('in' as const),
      column: fc.constant(s.expr),
      values: fc.array(literalFor(s.type, true), { minLength: 1, maxLength: 6 }),
    }),
  );
  // contains/startswith/endswith take any column, or a function that gives text.
  const matchSubjects = subjects
    .filter((s) => s.expr.kind === 'column' || s.type === 'text')
    .map((s) => s.expr);
  const match: fc.Arbitrary<FilterExpr> = fc.record({
    kind: fc.constant('match' as const),
    fn: fc.constantFrom(...FNS),
    column: fc.constantFrom(...matchSubjects),
    value: stringValue,
  });
  const leaf = fc.oneof({ weight: 4, arbitrary: compare }, membership, match);
  const { expr } = fc.letrec<{ expr: FilterExpr }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', maxDepth, withCrossShrink: true },
      { weight: 3, arbitrary: leaf },
      fc.record({ kind: fc.constant('not' as const), expr: tie('expr') }),
      fc.record({
        kind: fc.constantFrom('and' as const, 'or' as const),
        items: fc.array(tie('expr'), { minLength: 2, maxLength: 4 }),
      }),
    ),
  }));
  return expr;
}

/** How a filter is spelled: keyword case and the whitespace between tokens. */
export interface Spelling {
  readonly upper: boolean;
  readonly space: string;
}

export const spellingArb: fc.Arbitrary<Spelling> = fc.record({
  upper: fc.boolean(),
  space: fc.constantFrom(' ', '  ', '\t', '\n', ' \r\n '),
});

function literalText(literal: FilterLiteral, s: Spelling): string {
  switch (literal.kind) {
    case 'date':
    case 'datetime':
    case 'timeofday':
      return literal.text;
    case 'user':
      return `@user.${literal.field}`;
    case 'string':
      return `'${literal.value.replaceAll("'", "''")}'`;
    case 'number':
      return literal.text;
    case 'boolean':
      return keyword(String(literal.value), s);
    case 'null':
      return keyword('null', s);
  }
}

function keyword(word: string, s: Spelling): string {
  return s.upper ? word.toUpperCase() : word;
}

function columnText(expr: ColumnExpr, s: Spelling): string {
  return expr.kind === 'column' ? expr.name : `${keyword(expr.fn, s)}(${expr.column.name})`;
}

function operandText(operand: Operand, s: Spelling): string {
  return operand.kind === 'column' || operand.kind === 'call'
    ? columnText(operand, s)
    : literalText(operand, s);
}

/** The filter as text the grammar accepts; and/or/not groups are always parenthesised. */
export function filterText(expr: FilterExpr, s: Spelling): string {
  const _ = s.space;
  switch (expr.kind) {
    case 'or':
    case 'and':
      return `(${expr.items.map((item) => filterText(item, s)).join(`${_}${keyword(expr.kind, s)}${_}`)})`;
    case 'not':
      return `${keyword('not', s)}${_}(${filterText(expr.expr, s)})`;
    case 'compare':
      return `${operandText(expr.left, s)}${_}${keyword(expr.op, s)}${_}${operandText(expr.right, s)}`;
    case 'in':
      return `${columnText(expr.column, s)}${_}${keyword('in', s)}${_}(${expr.values.map((v) => literalText(v, s)).join(`,${_}`)})`;
    case 'match':
      return `${keyword(expr.fn, s)}(${columnText(expr.column, s)},${_}${typeof expr.value === 'string' ? literalText({ kind: 'string', value: expr.value }, s) : literalText(expr.value, s)})`;
    case 'lambda':
      throw new Error('lambdas are not generated here');
  }
}

/** A parsed AST with every `position` set to 0, for comparing with a generated one. */
export function withoutPositions<T>(value: T): T {
  return JSON.parse(JSON.stringify(value), (key, v) => (key === 'position' ? 0 : v)) as T;
}

/** `$select`, `$orderby`, `$top`, `$skip`, `$count` over a table's columns (any name, quoted later). */
export function optionsArb(table: TableInfo): fc.Arbitrary<Record<string, string>> {
  const names = table.columns.map((c) => c.name);
  return fc.record(
    {
      $select: fc.oneof(
        fc.constant('*'),
        fc.uniqueArray(fc.constantFrom(...names), { minLength: 1 }).map((a) => a.join(',')),
      ),
      $orderby: fc
        .uniqueArray(
          fc.tuple(fc.constantFrom(...names), fc.constantFrom('', ' asc', ' desc', ' DESC')),
          { minLength: 1, maxLength: 3, selector: ([name]) => name },
        )
        .map((items) => items.map(([name, direction]) => `${name}${direction}`).join(',')),
      $top: fc.oneof(fc.nat(100), fc.constant(Number.MAX_SAFE_INTEGER)).map(String),
      $skip: fc.oneof(fc.nat(100), fc.constant(Number.MAX_SAFE_INTEGER)).map(String),
      $count: fc.constantFrom('true', 'false', 'TRUE'),
    },
    { requiredKeys: [] },
  );
}

/** `?` placeholders in SQL text, ignoring backtick-quoted names (a name may hold a `?`). */
export function placeholderCount(sql: string): number {
  return (sql.replace(/`(?:[^`]|``)*`/g, '').match(/\?/g) ?? []).length;
}
