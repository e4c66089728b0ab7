/**
 * fast-check generators for the read options of CONTRACT §3.1, built from the grammar rather
 * than from strings: a random valid `$filter` AST (shaped exactly like the parser's output, so
 * a round trip can be compared), its text in a random but valid spelling (keyword case,
 * whitespace, number forms), and random `$select`/`$orderby`/`$top`/`$skip` over a table's
 * columns. Used by the unit fuzz (parse → plan → compile) and by the MariaDB round trip.
 */
import fc from 'fast-check';
import type { TableInfo } from '../../src/db/schema-types.js';
import type { CompareOp, FilterExpr, Literal, MatchFn, Operand } from '../../src/query/ast.js';

const OPS: readonly CompareOp[] = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'];
const FNS: readonly MatchFn[] = ['contains', 'startswith', 'endswith'];

/** A name the filter grammar can spell (identifier characters only, not a keyword). */
export function filterableColumns(table: TableInfo): string[] {
  return table.columns
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

/** A valid filter AST over `columns` (positions are 0: compare with `withoutPositions`). */
export function filterArb(columns: readonly string[], maxDepth = 4): fc.Arbitrary<FilterExpr> {
  const column = fc.constantFrom(...columns).map((name) => ({
    kind: 'column' as const,
    name,
    position: 0,
  }));
  const operand: fc.Arbitrary<Operand> = fc.oneof(column, nonNullLiteral);
  const compare: fc.Arbitrary<FilterExpr> = fc.oneof(
    fc.record({
      kind: fc.constant('compare' as const),
      op: fc.constantFrom(...OPS),
      left: operand,
      right: operand,
      position: fc.constant(0),
    }),
    // `null` only with eq/ne: with lt/le/gt/ge it is a plan error (tested on its own).
    fc
      .tuple(fc.constantFrom<CompareOp>('eq', 'ne'), fc.oneof(column, literalArb), fc.boolean())
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
  const membership: fc.Arbitrary<FilterExpr> = fc.record({
    kind: fc.constant('in' as const),
    column,
    values: fc.array(literalArb, { minLength: 1, maxLength: 6 }),
  });
  const match: fc.Arbitrary<FilterExpr> = fc.record({
    kind: fc.constant('match' as const),
    fn: fc.constantFrom(...FNS),
    column,
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

function literalText(literal: Literal, s: Spelling): string {
  switch (literal.kind) {
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

function operandText(operand: Operand, s: Spelling): string {
  return operand.kind === 'column' ? operand.name : literalText(operand, s);
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
      return `${expr.column.name}${_}${keyword('in', s)}${_}(${expr.values.map((v) => literalText(v, s)).join(`,${_}`)})`;
    case 'match':
      return `${keyword(expr.fn, s)}(${expr.column.name},${_}${literalText({ kind: 'string', value: expr.value }, s)})`;
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
