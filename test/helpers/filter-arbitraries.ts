/**
 * fast-check generators for the read options of docs/filters.md, built from the grammar
 * rather than from strings: a random valid `$filter` AST (shaped exactly like the parser's
 * output, so a round trip can be compared) whose functions and date/time literals meet columns
 * of the types they take, its text in a random but valid spelling (keyword case, whitespace,
 * number forms), and random `$select`/`$orderby`/`$top`/`$skip` over a table's columns. Used by
 * the unit fuzz (parse → plan → compile) and by the MariaDB round trip.
 */
import fc from 'fast-check';
import type { ColumnInfo, TableInfo } from '../../src/db/schema-types.js';
import { columnType, type ValueType } from '../../src/plan/filter-types.js';
import type {
  ColumnExpr,
  ColumnFn,
  ColumnRef,
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
/** Standard base64 of a few bytes, the text a binary column is read and filtered as. */
const base64Text = fc
  .uint8Array({ maxLength: 8 })
  .map((bytes) => Buffer.from(bytes).toString('base64'));

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

/** The functions and the column types each takes, with the type it gives (docs/filters.md). */
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
    case 'binary':
      // A quoted string is the base64 of the bytes, as reads show them.
      return fc.oneof(plain, base64Text.map(quoted));
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
  // contains/startswith/endswith take any column but a binary one, or a function giving text.
  const matchSubjects = subjects
    .filter((s) => (s.expr.kind === 'column' && s.type !== 'binary') || s.type === 'text')
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

/** A name as a request writes it: as is when plain, else in double quotes (`"zip code"`). */
export function nameText(name: string): string {
  return /^[\p{L}_$][\p{L}\p{M}\p{N}_$]*$/u.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/** A column, after the relations of its path: `customer/"zip code"`. */
function refText(ref: ColumnRef): string {
  return [...(ref.path ?? []), ref.name].map(nameText).join('/');
}

function columnText(expr: ColumnExpr, s: Spelling): string {
  return expr.kind === 'column' ? refText(expr) : `${keyword(expr.fn, s)}(${refText(expr.column)})`;
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
    case 'lambda': {
      const head = `${expr.path.map(nameText).join('/')}/${keyword(expr.op, s)}`;
      if (expr.expr === null || expr.variable === null) return `${head}()`;
      return `${head}(${expr.variable}:${_}${filterText(expr.expr, s)})`;
    }
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

// ---- $apply (totals) ------------------------------------------------------------------------

/** A value `$apply` may name: a column of the table, or one through a to-one relation. */
interface ApplyColumn {
  readonly text: string;
  readonly column: ColumnInfo;
}

/** A generated read with `$apply`, and what the round trip needs to check its answer. */
export interface GeneratedApply {
  readonly query: Record<string, string>;
  /** `groups`: groupby(…); `one`: aggregate(…) alone; `rows`: neither (filter/compute only). */
  readonly shape: 'groups' | 'one' | 'rows';
  /** The index of `$count as n` in each answer row, when grouped (always there then). */
  readonly countAt: number | null;
}

const SUMMABLE_KINDS = new Set(['integer', 'decimal', 'float']);
const ORDERED_KINDS = new Set([
  'integer',
  'decimal',
  'float',
  'year',
  'bit',
  'date',
  'datetime',
  'string',
]);

/**
 * Random valid `$apply` expressions over `table` and, through each to-one relation given, its
 * target's columns (`order/price`): filter() steps from filterArb, a compute() step with
 * functions on columns of the types they take (and a filter() on what it computed), then
 * groupby(…) or aggregate(…) (or neither),
 * with aggregates only on columns of a type their method takes (docs/totals.md's rules, written
 * out here again) and always `$count as n`; `$filter`, `$orderby` over what the answer holds,
 * paging and `$count` around it; keywords in either case, spaces here and there.
 */
export function applyArb(
  table: TableInfo,
  relations: readonly { readonly name: string; readonly target: TableInfo }[] = [],
): fc.Arbitrary<GeneratedApply> {
  const columnsOf = (t: TableInfo, prefix: string): ApplyColumn[] =>
    filterableColumns(t).map((name) => ({
      text: `${prefix}${name}`,
      column: t.columnsByName.get(name) as ColumnInfo,
    }));
  const values = [
    ...columnsOf(table, ''),
    ...relations.flatMap((r) => columnsOf(r.target, `${r.name}/`)),
  ];
  const computable = values.flatMap((value) =>
    FN_TYPES.filter(([, takes]) => takes.includes(columnType(value.column))).map(
      ([fn, , gives]) => ({ fn, value, gives }),
    ),
  );
  const spelling = fc.record({ upper: fc.boolean(), space: fc.constantFrom('', ' ', '  ') });
  const computes = fc.uniqueArray(fc.constantFrom(...computable), { maxLength: 3 });
  const filterTexts = fc.array(
    fc.tuple(filterArb(table, 3), spellingArb).map(([expr, s]) => filterText(expr, s)),
    { maxLength: 2 },
  );
  return fc
    .record({
      spelling,
      computed: computes,
      steps: filterTexts,
      // A filter() step when the rows themselves are asked for and there would be none.
      extra: fc.tuple(filterArb(table, 2), spellingArb).map(([expr, s]) => filterText(expr, s)),
      $filter: fc.option(
        fc.tuple(filterArb(table, 2), spellingArb).map(([expr, s]) => filterText(expr, s)),
        { nil: undefined },
      ),
      aliasFilter: fc.boolean(),
      shape: fc.constantFrom('groups', 'groups', 'groups', 'one', 'rows' as const),
      pick: fc.infiniteStream(fc.nat()),
      methods: fc.array(fc.constantFrom('sum', 'average', 'min', 'max', 'countdistinct' as const), {
        maxLength: 4,
      }),
      paging: fc.record(
        {
          $top: fc.nat(20).map(String),
          $skip: fc.nat(5).map(String),
          $count: fc.constantFrom('true', 'false'),
        },
        { requiredKeys: [] },
      ),
      descending: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    })
    .map((drawn): GeneratedApply => {
      const k = (word: string) => (drawn.spelling.upper ? word.toUpperCase() : word);
      const sep = `,${drawn.spelling.space}`;
      const picks = drawn.pick[Symbol.iterator]();
      const pick = <T>(items: readonly T[]): T =>
        items[(picks.next().value as number) % items.length] as T;
      const computed = drawn.computed.map((c, i) => ({ ...c, alias: `c${i}` }));
      const stepFilters =
        drawn.shape === 'rows' && drawn.steps.length === 0 && computed.length === 0
          ? [drawn.extra]
          : drawn.steps;
      const steps = stepFilters.map((text) => `${k('filter')}(${text})`);
      if (computed.length > 0) {
        const items = computed.map((c) => `${k(c.fn)}(${c.value.text}) ${k('as')} ${c.alias}`);
        steps.push(`${k('compute')}(${items.join(sep)})`);
        // A filter() after compute() may name what it computed.
        if (drawn.aliasFilter)
          steps.push(`${k('filter')}(${pick(computed).alias} ${k('ne')} ${k('null')})`);
      }
      const query: Record<string, string> = { ...drawn.paging };
      if (drawn.$filter !== undefined) query.$filter = drawn.$filter;
      const order: string[] = [];
      let countAt: number | null = null;
      if (drawn.shape === 'rows') {
        order.push(
          pick([...columnsOf(table, '').map((v) => v.text), ...computed.map((c) => c.alias)]),
        );
      } else {
        // Group keys: columns, paths or computed names, each once (two paths share an object).
        const named = [...values.map((v) => v.text), ...computed.map((c) => c.alias)];
        const keys =
          drawn.shape === 'groups'
            ? [
                ...new Set(
                  [pick(named), pick(named), pick(named)].slice(0, 1 + (pick([0, 1, 2]) as number)),
                ),
              ]
            : [];
        const aggregates = [`${k('$count')} ${k('as')} n`];
        const aliases = ['n'];
        drawn.methods.forEach((method, i) => {
          const takes = [
            ...values
              .filter(({ column }) =>
                method === 'sum' || method === 'average'
                  ? SUMMABLE_KINDS.has(column.kind)
                  : method === 'countdistinct' || ORDERED_KINDS.has(column.kind),
              )
              .map((v) => v.text),
            ...computed
              .filter((c) =>
                method === 'sum' || method === 'average' ? c.gives === 'number' : true,
              )
              .map((c) => c.alias),
          ];
          if (takes.length === 0) return;
          aggregates.push(`${pick(takes)} ${k('with')} ${k(method)} ${k('as')} a${i}`);
          aliases.push(`a${i}`);
        });
        // Every group value (nested ones too) comes before the aggregates, `n` first of them.
        countAt = keys.length;
        const aggregate = `${k('aggregate')}(${aggregates.join(sep)})`;
        steps.push(
          drawn.shape === 'groups'
            ? `${k('groupby')}((${keys.join(sep)})${sep}${aggregate})`
            : aggregate,
        );
        order.push(pick([...keys, ...aliases]), pick(aliases));
      }
      const orderby = [...new Set(order)].map(
        (name, i) => `${name}${drawn.descending[i] === true ? ' desc' : ''}`,
      );
      query.$orderby = orderby.join(',');
      query.$apply = steps.join(pick(['/', ' / ']));
      return {
        query,
        shape: drawn.shape,
        countAt: drawn.shape === 'rows' ? null : countAt,
      };
    });
}
// ---- Reads across relations ($expand, paths, lambdas) ---------------------------------------

/**
 * A schema with foreign keys as a test declares it by hand (independently of how the gateway
 * names relations): columns in table order with the literals a filter may compare them with,
 * and each relation with its kind, target and key pairs (local → remote column).
 */
export interface RelationalModel {
  readonly tables: Readonly<Record<string, ModelTable>>;
}

export interface ModelTable {
  readonly key: readonly string[];
  readonly columns: readonly ModelColumn[];
  readonly relations: readonly ModelRelation[];
}

export interface ModelColumn {
  readonly name: string;
  readonly type: 'int' | 'decimal' | 'text' | 'datetime';
  /** Values to compare with: some that the data holds, some that it does not. */
  readonly values: readonly string[];
}

export interface ModelRelation {
  readonly name: string;
  readonly kind: 'one' | 'many';
  readonly target: string;
  readonly pairs: readonly (readonly [local: string, remote: string])[];
}

/** A read across relations: the request's options as an AST (`$expand` items included). */
export interface RelationalRead {
  readonly select: '*' | readonly string[];
  readonly filter: FilterExpr | null;
  readonly orderBy: readonly { readonly ref: ColumnRef; readonly desc: boolean }[];
  readonly top: number | null;
  readonly skip: number | null;
  readonly expand: readonly RelationalExpand[];
}

export interface RelationalExpand {
  /** The relations walked: one, or a path (`a/b`) whose options belong to the last. */
  readonly path: readonly string[];
  readonly read: RelationalRead;
}

const literalOf = (column: ModelColumn, value: string): Literal =>
  column.type === 'int' || column.type === 'decimal'
    ? { kind: 'number', text: value }
    : { kind: 'string', value };

/** Where names in a filter resolve: the filter's own table, and the lambda variables in scope. */
interface FilterScope {
  readonly home: string;
  readonly variables: ReadonlyMap<string, string>;
}

/** The column references a filter in `scope` may make: own columns, paths, variables' columns. */
function refsOf(
  model: RelationalModel,
  scope: FilterScope,
): { ref: ColumnRef; column: ModelColumn }[] {
  const refs: { ref: ColumnRef; column: ModelColumn }[] = [];
  const from = (table: string, prefix: readonly string[], steps: number) => {
    const t = model.tables[table] as ModelTable;
    for (const column of t.columns) {
      const ref: ColumnRef =
        prefix.length === 0
          ? { kind: 'column', name: column.name, position: 0 }
          : { kind: 'column', name: column.name, position: 0, path: prefix };
      refs.push({ ref, column });
    }
    if (steps === 0) return;
    for (const relation of t.relations) {
      if (relation.kind === 'one') from(relation.target, [...prefix, relation.name], steps - 1);
    }
  };
  from(scope.home, [], 2);
  for (const [variable, table] of scope.variables) from(table, [variable], 1);
  return refs;
}

/** The to-many relations a lambda in `scope` may range over, as paths, and their tables. */
function lambdaTargets(model: RelationalModel, scope: FilterScope) {
  const targets: { path: string[]; table: string }[] = [];
  const starts: [string[], string][] = [[[], scope.home]];
  for (const [variable, table] of scope.variables) starts.push([[variable], table]);
  for (const [prefix, table] of starts) {
    for (const relation of (model.tables[table] as ModelTable).relations) {
      if (relation.kind === 'many')
        targets.push({ path: [...prefix, relation.name], table: relation.target });
      else {
        for (const next of (model.tables[relation.target] as ModelTable).relations) {
          if (next.kind === 'many') {
            targets.push({ path: [...prefix, relation.name, next.name], table: next.target });
          }
        }
      }
    }
  }
  return targets;
}

/**
 * A valid `$filter` over `scope.home` with paths through to-one relations and any/all lambdas
 * over to-many ones (nested, bare names inside meaning the home row's columns), every literal
 * of the compared column's type.
 */
export function relationalFilterArb(
  model: RelationalModel,
  scope: FilterScope,
  depth = 3,
): fc.Arbitrary<FilterExpr> {
  const refs = refsOf(model, scope);
  const pick = fc.constantFrom(...refs);
  const compare = pick.chain(({ ref, column }) =>
    fc.oneof(
      {
        weight: 4,
        arbitrary: fc.tuple(fc.constantFrom(...OPS), fc.constantFrom(...column.values)).map(
          ([op, value]): FilterExpr => ({
            kind: 'compare',
            op,
            left: ref,
            right: literalOf(column, value),
            position: 0,
          }),
        ),
      },
      fc.constantFrom<FilterExpr>(
        { kind: 'compare', op: 'eq', left: ref, right: { kind: 'null' }, position: 0 },
        { kind: 'compare', op: 'ne', left: ref, right: { kind: 'null' }, position: 0 },
      ),
      fc.uniqueArray(fc.constantFrom(...column.values), { minLength: 1, maxLength: 3 }).map(
        (values): FilterExpr => ({
          kind: 'in',
          column: ref,
          values: values.map((v) => literalOf(column, v)),
        }),
      ),
      ...(column.type === 'text'
        ? [
            fc.tuple(fc.constantFrom(...FNS), fc.constantFrom(...column.values)).map(
              ([fn, value]): FilterExpr => ({
                kind: 'match',
                fn,
                column: ref,
                value: value.slice(0, 2),
              }),
            ),
          ]
        : []),
    ),
  );
  const targets = lambdaTargets(model, scope);
  const lambda: fc.Arbitrary<FilterExpr> | null =
    depth <= 1 || targets.length === 0
      ? null
      : fc.constantFrom(...targets).chain(({ path, table }) => {
          const last = path[path.length - 1] as string;
          // odata-query names the variable after the relation; others write x, y.
          const free = ['x', 'y', 'z', last].filter(
            (v) =>
              !scope.variables.has(v) &&
              !(model.tables[scope.home] as ModelTable).relations.some((r) => r.name === v) &&
              !(model.tables[scope.home] as ModelTable).columns.some((c) => c.name === v),
          );
          const variable = free[0] as string;
          const inner: FilterScope = {
            home: scope.home,
            variables: new Map([...scope.variables, [variable, table]]),
          };
          return fc.oneof(
            fc.constant<FilterExpr>({
              kind: 'lambda',
              op: 'any',
              path,
              variable: null,
              expr: null,
              position: 0,
            }),
            fc
              .tuple(
                fc.constantFrom('any' as const, 'all' as const),
                relationalFilterArb(model, inner, depth - 1),
              )
              .map(
                ([op, expr]): FilterExpr => ({
                  kind: 'lambda',
                  op,
                  path,
                  variable,
                  expr,
                  position: 0,
                }),
              ),
          );
        });
  const leaf =
    lambda === null
      ? compare
      : fc.oneof({ weight: 3, arbitrary: compare }, { weight: 2, arbitrary: lambda });
  if (depth <= 1) return leaf;
  const smaller = relationalFilterArb(model, scope, depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    smaller.map((expr): FilterExpr => ({ kind: 'not', expr })),
    fc
      .tuple(
        fc.constantFrom('and' as const, 'or' as const),
        fc.array(smaller, { minLength: 2, maxLength: 3 }),
      )
      .map(([kind, items]): FilterExpr => ({ kind, items })),
  );
}

/** `$orderby` over columns and to-one paths, ending with the key (so no two rows tie). */
function orderArb(model: RelationalModel, table: string) {
  const t = model.tables[table] as ModelTable;
  const refs = refsOf(model, { home: table, variables: new Map() }).filter(
    ({ ref }) => (ref.path?.length ?? 0) <= 1,
  );
  return fc
    .array(fc.tuple(fc.constantFrom(...refs), fc.boolean()), { maxLength: 2 })
    .map((items) => {
      const order = items.map(([{ ref }, desc]) => ({ ref, desc }));
      for (const key of t.key)
        order.push({ ref: { kind: 'column', name: key, position: 0 }, desc: false });
      return order;
    });
}

/**
 * A read of `table` with `$expand` items (nested, paths, every option, at most `levels` deep and
 * `budget` relations in all), filters with paths and lambdas, orders ending with the key, and
 * paging; `many` says whether it is the read of a to-many relation (paging and order apply) or
 * of a to-one (`$select`, `$filter`, `$expand` only).
 */
export function relationalReadArb(
  model: RelationalModel,
  table: string,
  options: { levels?: number; budget?: number; kind?: 'top' | 'one' | 'many' } = {},
): fc.Arbitrary<RelationalRead> {
  const { levels = 3, budget = 10, kind = 'top' } = options;
  const t = model.tables[table] as ModelTable;
  const names = t.columns.map((c) => c.name);
  const select = fc.oneof(
    fc.constant<'*'>('*'),
    fc.uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: names.length }),
  );
  const filter = fc.option(relationalFilterArb(model, { home: table, variables: new Map() }, 3), {
    freq: 2,
  });
  const paged = kind !== 'one';
  const expand: fc.Arbitrary<RelationalExpand[]> =
    levels === 0 || budget === 0
      ? fc.constant([])
      : fc
          .uniqueArray(fc.constantFrom(...t.relations), {
            maxLength: Math.min(2, budget),
            selector: (r) => r.name,
          })
          .chain((relations) =>
            relations.length === 0
              ? fc.constant([])
              : fc.tuple(
                  ...relations.map((relation) => {
                    const share = Math.max(
                      1,
                      Math.floor((budget - relations.length) / relations.length),
                    );
                    const target = model.tables[relation.target] as ModelTable;
                    // Sometimes a path: relation/next, the options for the last.
                    const nexts = levels >= 2 && share >= 1 ? target.relations : [];
                    const read = (
                      name: string,
                      relKind: 'one' | 'many',
                      depthLeft: number,
                      left: number,
                    ) =>
                      relationalReadArb(model, name, {
                        levels: depthLeft,
                        budget: left,
                        kind: relKind,
                      });
                    const plain = read(relation.target, relation.kind, levels - 1, share - 1).map(
                      (r): RelationalExpand => ({ path: [relation.name], read: r }),
                    );
                    if (nexts.length === 0) return plain;
                    return fc.oneof(
                      { weight: 3, arbitrary: plain },
                      fc.constantFrom(...nexts).chain((next) =>
                        read(next.target, next.kind, levels - 2, Math.max(0, share - 2)).map(
                          (r): RelationalExpand => ({
                            path: [relation.name, next.name],
                            read: r,
                          }),
                        ),
                      ),
                    );
                  }),
                ),
          );
  return fc.record({
    select,
    filter,
    orderBy:
      kind === 'one'
        ? fc.constant([])
        : kind === 'top'
          ? orderArb(model, table)
          : fc.option(orderArb(model, table), { freq: 2 }).map((o) => o ?? []),
    top: paged ? fc.option(fc.nat(4), { freq: 2 }) : fc.constant(null),
    skip: paged ? fc.option(fc.nat(3), { freq: 3 }) : fc.constant(null),
    expand,
  });
}

function orderText(order: RelationalRead['orderBy']): string {
  return order.map(({ ref, desc }) => `${refText(ref)}${desc ? ' desc' : ''}`).join(',');
}

function selectText(select: RelationalRead['select']): string {
  return select === '*' ? '*' : select.map(nameText).join(',');
}

/** An `$expand` value as a client writes it. */
export function expandText(items: readonly RelationalExpand[], s: Spelling): string {
  return items
    .map(({ path, read }) => {
      const options: string[] = [];
      if (read.select !== '*') options.push(`$select=${selectText(read.select)}`);
      if (read.filter !== null) options.push(`$filter=${filterText(read.filter, s)}`);
      if (read.orderBy.length > 0) options.push(`$orderby=${orderText(read.orderBy)}`);
      if (read.top !== null) options.push(`$top=${read.top}`);
      if (read.skip !== null) options.push(`$skip=${read.skip}`);
      if (read.expand.length > 0) options.push(`$expand=${expandText(read.expand, s)}`);
      const name = path.map(nameText).join('/');
      return options.length === 0 ? name : `${name}(${options.join(';')})`;
    })
    .join(',');
}

/** The query string's options of a top-level read (values unencoded). */
export function readQuery(
  read: RelationalRead,
  s: Spelling,
  count = false,
): Record<string, string> {
  const query: Record<string, string> = {};
  if (read.select !== '*') query.$select = selectText(read.select);
  if (read.filter !== null) query.$filter = filterText(read.filter, s);
  if (read.orderBy.length > 0) query.$orderby = orderText(read.orderBy);
  if (read.top !== null) query.$top = String(read.top);
  if (read.skip !== null) query.$skip = String(read.skip);
  if (read.expand.length > 0) query.$expand = expandText(read.expand, s);
  if (count) query.$count = 'true';
  return query;
}
