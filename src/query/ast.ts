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

/** A column name as written in the filter; `position` is its 1-based character position. */
export interface ColumnRef {
  readonly kind: 'column';
  readonly name: string;
  readonly position: number;
}

export type Operand = ColumnRef | Literal;

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
  | { readonly kind: 'in'; readonly column: ColumnRef; readonly values: readonly Literal[] }
  | {
      readonly kind: 'match';
      readonly fn: MatchFn;
      readonly column: ColumnRef;
      readonly value: string;
    };

export type SortDirection = 'asc' | 'desc';

export interface OrderItem {
  readonly column: string;
  readonly direction: SortDirection;
}

export interface ReadRequest {
  /** `'*'` for every column in table order, otherwise the names in the order given. */
  readonly select: '*' | readonly string[];
  readonly filter: FilterExpr | null;
  readonly orderBy: readonly OrderItem[];
  readonly top: number | null;
  readonly skip: number | null;
  readonly count: boolean;
}
