/**
 * The parsed shape of a read request: what the query string says, before any name is checked
 * against the schema. Produced by options.ts and filter-parser.ts, consumed by plan/read-plan.ts.
 * Every node is a `kind`-tagged object so consumers can switch exhaustively.
 */

/** A literal value. Numbers keep their exact source text: they are never turned into a float here. */
export type Literal =
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'number'; readonly text: string }
  | { readonly kind: 'boolean'; readonly value: boolean }
  | { readonly kind: 'null' };

export type NullLiteral = Extract<Literal, { kind: 'null' }>;
export type NonNullLiteral = Exclude<Literal, NullLiteral>;

/**
 * An unquoted date or time literal (docs/filters.md), checked and normalised by the lexer.
 * `text` is the source as written (for messages); `value` is what MySQL is sent: `YYYY-MM-DD`
 * for a date, `YYYY-MM-DD hh:mm:ss.ffffff` in UTC for a datetime (its offset applied), and
 * `hh:mm:ss.ffffff` for a time of day.
 */
export type TemporalLiteral = {
  readonly kind: 'date' | 'datetime' | 'timeofday';
  readonly text: string;
  readonly value: string;
};

/** The signed-in caller's values a policy's where may name: `@user.id`, `@user.email`, `@user.role`. */
export const USER_FIELDS = ['id', 'email', 'role'] as const;
export type UserField = (typeof USER_FIELDS)[number];

/**
 * `@user.id`, `@user.email`, `@user.role` in a policy's where: the signed-in caller's value, put
 * in as a parameter when the statement runs, and compared exactly (sql/compile-filter.ts).
 */
export interface UserParameter {
  readonly kind: 'user';
  readonly field: UserField;
}

/** A value in a filter: a key-value literal, a date/time literal or a caller's value. */
export type FilterLiteral = Literal | TemporalLiteral | UserParameter;
export type NonNullFilterLiteral = Exclude<FilterLiteral, NullLiteral>;

/** A column name as written in the filter; `position` is its 1-based character position. */
export interface ColumnRef {
  readonly kind: 'column';
  readonly name: string;
  readonly position: number;
  /**
   * The relations walked before the column (`customer/country` → `['customer']`); inside a
   * lambda the first may be its variable (`i/qty`). Absent for a column of the table itself.
   */
  readonly path?: readonly string[];
  /**
   * Written in double quotes (`"zip code"`), without a path: a name that is no column was likely
   * meant as a string (`name eq "apple"`), and the unknown-column answer says so (plan/scope.ts).
   */
  readonly quoted?: true;
}

/** The functions a filter may apply to a column (docs/filters.md). */
export const COLUMN_FNS = [
  'tolower',
  'toupper',
  'trim',
  'length',
  'year',
  'month',
  'day',
  'hour',
  'minute',
  'second',
  'date',
] as const;
export type ColumnFn = (typeof COLUMN_FNS)[number];

/** `fn(column)`; `position` is the function name's. */
export interface FunctionCall {
  readonly kind: 'call';
  readonly fn: ColumnFn;
  readonly column: ColumnRef;
  readonly position: number;
}

/** What a condition is about: a column, or a function of one. */
export type ColumnExpr = ColumnRef | FunctionCall;

export type Operand = ColumnExpr | FilterLiteral;

export type CompareOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';
export type MatchFn = 'contains' | 'startswith' | 'endswith';

export type FilterExpr =
  | { readonly kind: 'or'; readonly items: readonly FilterExpr[] }
  | { readonly kind: 'and'; readonly items: readonly FilterExpr[] }
  | { readonly kind: 'not'; readonly expr: FilterExpr }
  | {
      readonly kind: 'compare';
      readonly op: CompareOp;
      readonly left: Operand;
      readonly right: Operand;
      /** 1-based character position of the operator, for errors found after parsing. */
      readonly position: number;
    }
  | {
      readonly kind: 'in';
      readonly column: ColumnExpr;
      readonly values: readonly FilterLiteral[];
    }
  | {
      readonly kind: 'match';
      readonly fn: MatchFn;
      readonly column: ColumnExpr;
      /** The text to find; a caller's value in a policy's where. */
      readonly value: string | UserParameter;
    }
  | Lambda;

/**
 * `items/any(i: i/qty gt 5)`, `items/all(i: …)`, `items/any()`: whether any (every) related row
 * of a to-many relation satisfies the condition. `path` is the relations walked, the to-many one
 * last; `variable` names a related row inside `expr` (null, with `expr`, for `any()`).
 */
export interface Lambda {
  readonly kind: 'lambda';
  readonly op: 'any' | 'all';
  readonly path: readonly string[];
  readonly variable: string | null;
  readonly expr: FilterExpr | null;
  readonly position: number;
}

export type SortDirection = 'asc' | 'desc';

export interface OrderItem {
  readonly column: string;
  readonly direction: SortDirection;
  /** Relations walked before the column (`customer/last_name`); absent for the table's own. */
  readonly path?: readonly string[];
}

/** The options of one `$expand` item (`items($select=…;$top=3)`). */
export interface ExpandOptions {
  readonly select: '*' | readonly string[];
  readonly filter: FilterExpr | null;
  readonly orderBy: readonly OrderItem[];
  readonly top: number | null;
  readonly skip: number | null;
  /** Absent when none. */
  readonly expand?: readonly ExpandItem[];
}

/** `customer`, `items/product($select=name)`: relations to follow, and what to read of the last. */
export interface ExpandItem {
  readonly path: readonly string[];
  readonly options: ExpandOptions;
}

export interface ReadRequest {
  /** `'*'` for every column in table order, otherwise the names in the order given. */
  readonly select: '*' | readonly string[];
  readonly filter: FilterExpr | null;
  readonly orderBy: readonly OrderItem[];
  readonly top: number | null;
  readonly skip: number | null;
  readonly count: boolean;
  /**
   * `$skiptoken` is given: the read continues after the position of the page before (its token
   * is opened by the read pipeline, which knows the key it is sealed with). Absent: false.
   */
  readonly continues?: boolean;
  /** `$expand`; absent when none. */
  readonly expand?: readonly ExpandItem[];
  /** `$apply` (totals); absent when none. */
  readonly apply?: readonly ApplyStep[];
}

// ---- $apply (docs/totals.md) ---------------------------------------------------------------

export const AGGREGATE_METHODS = ['sum', 'average', 'min', 'max', 'countdistinct'] as const;
export type AggregateMethod = (typeof AGGREGATE_METHODS)[number];

/**
 * One aggregate of `aggregate(…)`: `ref with method as alias`, or `$count as alias` (the rows
 * of the group). `ref` may name a computed alias; `position` is the alias's, for messages.
 */
export type Aggregate =
  | {
      readonly kind: 'aggregate';
      readonly ref: ColumnRef;
      readonly method: AggregateMethod;
      readonly alias: string;
      readonly position: number;
    }
  | { readonly kind: 'count'; readonly alias: string; readonly position: number };

/** `fn(column) as alias` of `compute(…)`; `position` is the alias's. */
export interface Computed {
  readonly call: FunctionCall;
  readonly alias: string;
  readonly position: number;
}

/** One transformation of `$apply`, in the order written (`filter(…)/groupby(…)`). */
export type ApplyStep =
  | { readonly kind: 'filter'; readonly expr: FilterExpr }
  | { readonly kind: 'compute'; readonly items: readonly Computed[] }
  /** `groupby((refs), aggregate(…))`; `aggregates` is empty without its aggregate. */
  | {
      readonly kind: 'groupby';
      readonly refs: readonly ColumnRef[];
      readonly aggregates: readonly Aggregate[];
    }
  | { readonly kind: 'aggregate'; readonly aggregates: readonly Aggregate[] };
