/**
 * A policy's `where`: `$filter` text that may name `@user.id`, `@user.email` and `@user.role`.
 * Parsed once at start by the $filter parser, the parameters as `user` literals; planned against
 * a table like a user's $filter, the same plan for every caller of the role: the caller's values
 * are put in when the statement runs (sql/user-values.ts), never pasted into SQL. Also: the
 * `col eq value` conjuncts that create and update are checked against.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { unknownColumn } from '../errors.js';
import type { PlannedFilter } from '../plan/nodes.js';
import type { Source } from '../plan/read-plan.js';
import { rootSource, Scope } from '../plan/scope.js';
import { fullView } from '../plan/view.js';
import type { FilterExpr, FilterLiteral, NonNullFilterLiteral } from '../query/ast.js';
import { parseFilter } from '../query/filter-parser.js';
import { visitFilterColumns } from '../query/visit.js';
import type { UserValues } from '../sql/user-values.js';

export type { UserValues } from '../sql/user-values.js';

/** A value a `col eq value` conjunct requires, and whether it is an `@user` value (exact). */
export interface RequiredValue {
  readonly literal: NonNullFilterLiteral;
  readonly exact: boolean;
}

export interface WhereTemplate {
  readonly text: string;
  readonly expr: FilterExpr;
  /** Whether `@user.…` appears. */
  readonly usesUser: boolean;
  /** The column names the where reads. */
  readonly columns: ReadonlySet<string>;
}

/** Parses a where; throws an Error whose message names the problem (the start-up line shows it). */
export function parseWhere(text: string): WhereTemplate {
  if (text.includes('\u0000')) throw new Error('a NUL character is not allowed');
  let expr: FilterExpr;
  try {
    expr = parseFilter(text, { parameters: true });
  } catch (error) {
    throw new Error((error as Error).message.replace('Invalid $filter', 'invalid where'));
  }
  const columns = new Set<string>();
  let usesUser = false;
  visitFilterColumns(expr, {
    column: (ref) => {
      if (ref.path !== undefined) {
        throw new Error(
          `'${[...ref.path, ref.name].join('/')}': a where names columns of its own table only`,
        );
      }
      columns.add(ref.name);
    },
    literal: (literal) => {
      if (literal.kind === 'user') usesUser = true;
    },
    lambda: () => {
      throw new Error('a where names columns of its own table only (no any() or all())');
    },
  });
  return { text, expr, usesUser, columns };
}

/** The where planned against a source of its table: the same for every caller, kept per source. */
export class WhereCondition {
  private readonly planned = new WeakMap<Source, PlannedFilter>();

  constructor(readonly template: WhereTemplate) {}

  plan(source: Source): PlannedFilter {
    let planned = this.planned.get(source);
    if (planned === undefined) {
      planned = Scope.filterOn(this.template.expr, source, fullView(source.table));
      this.planned.set(source, planned);
    }
    return planned;
  }

  /** The where planned against the table alone (a write's WHERE names no alias). */
  planOn(table: TableInfo): PlannedFilter {
    return this.plan(rootSource(table));
  }

  /**
   * The `column eq value` conjuncts of the where for this caller (column → required values), and
   * whether they are all of it. `and` nests flatten; `value eq column` counts too; a function of
   * a column (`tolower(x) eq 'a'`) does not. A `@user` value is the caller's, as a string, and
   * exact: satisfied only byte for byte (policy/stage.ts).
   */
  equalities(user: UserValues | null): {
    readonly required: ReadonlyMap<string, readonly RequiredValue[]>;
    /** Whether the where is nothing but those conjuncts. */
    readonly complete: boolean;
    /** Columns read by the rest of the where. */
    readonly elsewhere: ReadonlySet<string>;
  } {
    const required = new Map<string, RequiredValue[]>();
    const elsewhere = new Set<string>();
    let complete = true;
    const walk = (expr: FilterExpr): void => {
      if (expr.kind === 'and') {
        for (const item of expr.items) walk(item);
        return;
      }
      if (expr.kind === 'compare' && expr.op === 'eq') {
        const { left, right } = expr;
        const pair =
          left.kind === 'column' && !isColumnExpr(right)
            ? ([left.name, right] as const)
            : right.kind === 'column' && !isColumnExpr(left)
              ? ([right.name, left] as const)
              : null;
        const value = pair === null ? undefined : valueFor(pair[1] as FilterLiteral, user);
        if (pair !== null && value !== undefined) {
          const list = required.get(pair[0]) ?? [];
          list.push({ literal: value, exact: (pair[1] as FilterLiteral).kind === 'user' });
          required.set(pair[0], list);
          return;
        }
      }
      complete = false;
      visitFilterColumns(expr, { column: (ref) => elsewhere.add(ref.name) });
    };
    walk(this.template.expr);
    return { required, complete, elsewhere };
  }
}

function isColumnExpr(operand: { readonly kind: string }): boolean {
  return operand.kind === 'column' || operand.kind === 'call';
}

/** A literal as the value it requires (the caller's, for `@user`); undefined for `null`. */
function valueFor(
  literal: FilterLiteral,
  user: UserValues | null,
): NonNullFilterLiteral | undefined {
  if (literal.kind === 'null') return undefined;
  if (literal.kind !== 'user') return literal;
  // Anonymous has no user: validation refuses @user in its wheres, so this is a programming error.
  if (user === null) throw new Error(`@user.${literal.field} used without a signed-in user`);
  return { kind: 'string', value: user[literal.field] };
}

/** The column of the table a where or a `columns` list names; unknown → 400 UNKNOWN_COLUMN. */
export function columnOf(table: TableInfo, name: string): ColumnInfo {
  const column = table.columnsByName.get(name);
  if (column === undefined) throw unknownColumn(table.name, name);
  return column;
}
