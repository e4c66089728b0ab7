/**
 * A policy's `where`: `$filter` text that may name `@user.id`, `@user.email` and `@user.role`.
 * Parsed once at start by the $filter parser; at request time it is planned against the table
 * like a user's $filter, with the caller's values in place of `@user.…` as exact values (bound
 * as `?` parameters by the compiler, never pasted into SQL, and compared byte for byte: no
 * collation, no pad space; plan/read-plan.ts ExactValues). Also: the `col eq value` conjuncts
 * that create and update are checked against.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { unknownColumn } from '../errors.js';
import { type ExactValues, type PlannedFilter, planTableFilter } from '../plan/read-plan.js';
import type {
  ColumnExpr,
  FilterExpr,
  FilterLiteral,
  NonNullFilterLiteral,
  Operand,
} from '../query/ast.js';
import { parseFilter } from '../query/filter-parser.js';

export const USER_FIELDS = ['id', 'email', 'role'] as const;
export type UserField = (typeof USER_FIELDS)[number];

/** The signed-in caller as a where sees them; null for `anonymous`. */
export type UserValues = Readonly<Record<UserField, string>>;

/**
 * A parameter stands in the parsed text as a string literal holding this marker, so the parser
 * needs no new token; a NUL cannot reach a policy by accident, and the marker never reaches SQL.
 */
const marker = (field: UserField) => `\u0000tablegate:@user.${field}\u0000`;
const FIELD_BY_MARKER: ReadonlyMap<string, UserField> = new Map(
  USER_FIELDS.map((field) => [marker(field), field]),
);

export interface WhereTemplate {
  readonly text: string;
  readonly expr: FilterExpr;
  /** Whether `@user.…` appears (then the condition is planned per request). */
  readonly usesUser: boolean;
  /** The column names the where reads. */
  readonly columns: ReadonlySet<string>;
}

/** The where text with each `@user.<field>` outside a string literal replaced by its marker literal. */
function withMarkers(text: string): { text: string; usesUser: boolean } {
  let out = '';
  let usesUser = false;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "'") inString = !inString; // `''` toggles twice: still a string
    if (c === '@' && !inString) {
      const match = /^@user\.(id|email|role)(?![\p{L}\p{M}\p{N}_$])/u.exec(text.slice(i));
      if (match === null) {
        const word = /^@[\w.]*/.exec(text.slice(i))?.[0] ?? '@';
        throw new Error(
          `unknown parameter '${word}' at position ${i + 1}; use @user.id, @user.email or @user.role`,
        );
      }
      out += `'${marker(match[1] as UserField)}'`;
      usesUser = true;
      i += match[0].length - 1;
      continue;
    }
    out += c;
  }
  return { text: out, usesUser };
}

/** Parses a where; throws an Error whose message names the problem (the start-up line shows it). */
export function parseWhere(text: string): WhereTemplate {
  if (text.includes('\u0000')) throw new Error('a NUL character is not allowed');
  const marked = withMarkers(text);
  let expr: FilterExpr;
  try {
    expr = parseFilter(marked.text);
  } catch (error) {
    // Positions are those of the text with parameters replaced; the message says what is wrong.
    throw new Error((error as Error).message.replace('Invalid $filter', 'invalid where'));
  }
  const columns = new Set<string>();
  visitColumns(expr, (name) => columns.add(name));
  return { text, expr, usesUser: marked.usesUser, columns };
}

function visitColumns(expr: FilterExpr, visit: (name: string) => void): void {
  switch (expr.kind) {
    case 'or':
    case 'and':
      for (const item of expr.items) visitColumns(item, visit);
      return;
    case 'not':
      visitColumns(expr.expr, visit);
      return;
    case 'compare':
      for (const operand of [expr.left, expr.right]) {
        if (isColumnExpr(operand)) visit(columnName(operand));
      }
      return;
    case 'in':
    case 'match':
      visit(columnName(expr.column));
      return;
  }
}

function isColumnExpr(operand: Operand): operand is ColumnExpr {
  return operand.kind === 'column' || operand.kind === 'call';
}

function columnName(expr: ColumnExpr): string {
  return expr.kind === 'column' ? expr.name : expr.column.name;
}

/** The caller's value a marker stands for; undefined for any other text. */
function userValue(text: string, user: UserValues | null): string | undefined {
  const field = FIELD_BY_MARKER.get(text);
  if (field === undefined) return undefined;
  // Anonymous has no user: validation refuses @user in its wheres, so this is a programming error.
  if (user === null) throw new Error(`@user.${field} used without a signed-in user`);
  return user[field];
}

function bindLiteral(literal: FilterLiteral, user: UserValues | null): FilterLiteral {
  if (literal.kind !== 'string') return literal;
  const value = userValue(literal.value, user);
  return value === undefined ? literal : { kind: 'string', value };
}

/** A value a `col eq value` conjunct requires, and whether it is an `@user` value (exact). */
export interface RequiredValue {
  readonly literal: NonNullFilterLiteral;
  readonly exact: boolean;
}

/** The where with the caller's values in place of `@user.…`. */
export function bindWhere(expr: FilterExpr, user: UserValues | null): FilterExpr {
  switch (expr.kind) {
    case 'or':
    case 'and':
      return { kind: expr.kind, items: expr.items.map((item) => bindWhere(item, user)) };
    case 'not':
      return { kind: 'not', expr: bindWhere(expr.expr, user) };
    case 'compare':
      return {
        ...expr,
        left: isColumnExpr(expr.left) ? expr.left : bindLiteral(expr.left, user),
        right: isColumnExpr(expr.right) ? expr.right : bindLiteral(expr.right, user),
      };
    case 'in':
      return { ...expr, values: expr.values.map((value) => bindLiteral(value, user)) };
    case 'match': {
      const field = FIELD_BY_MARKER.get(expr.value);
      if (field === undefined) return expr;
      const bound = bindLiteral({ kind: 'string', value: expr.value }, user);
      return { ...expr, value: (bound as { value: string }).value };
    }
  }
}

/**
 * The where planned against the table for this caller. Without `@user` the plan is the same for
 * every request and kept per table object (a schema re-read makes new ones).
 */
export class WhereCondition {
  private readonly shared = new WeakMap<TableInfo, PlannedFilter>();

  constructor(readonly template: WhereTemplate) {}

  plan(table: TableInfo, user: UserValues | null): PlannedFilter {
    if (this.template.usesUser) {
      const exact: ExactValues = (text) => userValue(text, user);
      return planTableFilter(this.template.expr, table, exact);
    }
    let planned = this.shared.get(table);
    if (planned === undefined) {
      planned = planTableFilter(this.template.expr, table);
      this.shared.set(table, planned);
    }
    return planned;
  }

  /**
   * The `column eq value` conjuncts of the where for this caller (column → required values), and
   * whether they are all of it. `and` nests flatten; `value eq column` counts too; a function of
   * a column (`tolower(x) eq 'a'`) does not.
   */
  equalities(user: UserValues | null): {
    /** `@user` values among them are exact: satisfied only byte for byte (policy/stage.ts). */
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
        const value = pair?.[1];
        if (pair !== null && value !== undefined && value.kind !== 'null') {
          const list = required.get(pair[0]) ?? [];
          const exact = value.kind === 'string' ? userValue(value.value, user) : undefined;
          list.push(
            exact === undefined
              ? { literal: value, exact: false }
              : { literal: { kind: 'string', value: exact }, exact: true },
          );
          required.set(pair[0], list);
          return;
        }
      }
      complete = false;
      visitColumns(expr, (name) => elsewhere.add(name));
    };
    walk(this.template.expr);
    return { required, complete, elsewhere };
  }
}

/** The column of the table a where or a `columns` list names; unknown → 400 UNKNOWN_COLUMN. */
export function columnOf(table: TableInfo, name: string): ColumnInfo {
  const column = table.columnsByName.get(name);
  if (column === undefined) throw unknownColumn(table.name, name);
  return column;
}
