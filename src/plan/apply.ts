/**
 * A read with `$apply` (docs/totals.md) → ApplyPlan. Its rows are a read's: names resolve
 * through the caller's views (plan/scope.ts: a hidden column is unknown, a path through to-one
 * relations becomes a join, the role's row condition filters the rows before any grouping),
 * `$filter` and the filter() steps are ANDed into one WHERE. Then the groups: the groupby
 * values (columns, paths, compute() names), the aggregates (type-checked: apply-types.ts), the
 * keys of each answer object in order, `$orderby` over those keys. A node of its own beside
 * ReadPlan, sharing its Source, Join and PlannedFilter; knows no SQL (sql/compile-apply.ts).
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { applyType, invalidQuery } from '../errors.js';
import type {
  Aggregate,
  ApplyStep,
  ColumnExpr,
  ColumnRef,
  Computed,
  FilterExpr,
  FunctionCall,
  Operand,
  OrderItem,
  ReadRequest,
  SortDirection,
} from '../query/ast.js';
import { placed } from '../query/filter-parser.js';
import { excerpt } from '../query/lexer.js';
import {
  checkAggregate,
  checkComputed,
  checkPlain,
  type RowValue,
  type TotalMethod,
  totalResult,
  valueResult,
} from './apply-types.js';
import { both, type PlannedCall, type PlannedFilter } from './nodes.js';
import type { Join, Source } from './read-plan.js';
import { Scope } from './scope.js';
import { openViewer, type Viewer } from './view.js';

export type { RowValue } from './apply-types.js';

/** An aggregate of each group: `method` of `value` (null for `$count`). */
export interface TotalOutput {
  readonly kind: 'total';
  readonly name: string;
  readonly method: TotalMethod;
  readonly value: RowValue | null;
  /** What it gives, as the row codec writes it (apply-types.ts). */
  readonly result: ColumnInfo;
}

/** One key of every answer object, in order. */
export type ApplyOutput =
  /** A groupby value (or, without grouping, a column or computed value of the row). */
  | {
      readonly kind: 'value';
      readonly name: string;
      readonly value: RowValue;
      readonly result: ColumnInfo;
    }
  /** The groupby values through one relation (`customer/country`): an object, never null. */
  | { readonly kind: 'nested'; readonly name: string; readonly outputs: readonly ApplyOutput[] }
  | TotalOutput;

export interface ApplyOrder {
  readonly by: RowValue | TotalOutput;
  readonly direction: SortDirection;
}

export interface ApplyPlan {
  readonly source: Source;
  /** The to-one joins the values and filters walk, each once, parents first. */
  readonly joins: readonly Join[];
  /** `$filter`, the filter() steps and the caller's row condition, ANDed. */
  readonly filter: PlannedFilter | null;
  /**
   * The GROUP BY values, in order: none for one group of every row (`aggregate(…)` alone);
   * null when `$apply` has no groupby(…) or aggregate(…) and answers the rows themselves.
   */
  readonly groupBy: readonly RowValue[] | null;
  readonly outputs: readonly ApplyOutput[];
  /** `$orderby`, then every groupby value not in it (so pages of groups are stable). */
  readonly orderBy: readonly ApplyOrder[];
  readonly top: number | null;
  readonly skip: number | null;
  /** `$count=true`: the number of groups (of rows, without grouping). */
  readonly count: boolean;
}

export function planApply(
  request: ReadRequest,
  table: TableInfo,
  viewer: Viewer = openViewer,
): ApplyPlan {
  return new ApplyPlanner(Scope.root(table, viewer)).plan(request, request.apply ?? []);
}

type Grouping = Extract<ApplyStep, { kind: 'groupby' | 'aggregate' }>;

/** An output list being built: nested objects stay open for the paths that share them. */
type OpenOutput = ApplyOutput | { kind: 'nested'; name: string; outputs: OpenOutput[] };

class ApplyPlanner {
  /** compute() names: the planned call, and the call as written (filter() steps use it). */
  private readonly computed = new Map<string, { planned: PlannedCall; written: FunctionCall }>();

  constructor(private readonly scope: Scope) {}

  plan(request: ReadRequest, steps: readonly ApplyStep[]): ApplyPlan {
    const { scope } = this;
    const filters: PlannedFilter[] = [];
    if (request.filter !== null) filters.push(scope.filter(request.filter));
    let grouping: Grouping | null = null;
    for (const step of steps) {
      switch (step.kind) {
        case 'filter':
          // Its positions are in the `$apply` text.
          filters.push(placed('$apply', () => scope.filter(this.withComputed(step.expr))));
          break;
        case 'compute':
          for (const item of step.items) this.compute(item);
          break;
        default:
          grouping = step;
      }
    }
    const { groupBy, outputs } = grouping === null ? this.rows() : this.groups(grouping);
    const orderBy = this.order(request.orderBy, groupBy, outputs);
    const where =
      filters.length <= 1 ? (filters[0] ?? null) : { kind: 'and' as const, items: filters };
    return {
      source: scope.source,
      joins: scope.joins,
      filter: both(where, scope.view.rows(scope.source)),
      groupBy,
      outputs,
      orderBy,
      top: request.top,
      skip: request.skip,
      count: request.count,
    };
  }

  /** `fn(column) as name`: a name later steps may use as they use a column. */
  private compute({ call, alias, position }: Computed): void {
    if (this.computed.has(alias) || this.scope.view.column(alias) !== undefined) {
      throw invalidQuery(
        `Invalid $apply at position ${position}: '${excerpt(alias)}' already names ${this.computed.has(alias) ? 'a computed value' : 'a column'}; give the computed value another name`,
      );
    }
    this.notComputed(call);
    const arg = this.scope.ref(call.column);
    checkComputed(call.fn, arg.column, call.position);
    this.computed.set(alias, { planned: { kind: 'call', fn: call.fn, arg }, written: call });
  }

  /** A function takes a column, not a computed value: `year(y)` of `compute(year(at) as y)`. */
  private notComputed(call: FunctionCall): void {
    const { column } = call;
    if ((column.path ?? []).length === 0 && this.computed.has(column.name)) {
      throw applyType(
        `Invalid $apply at position ${call.position}: ${call.fn}() takes a column, and '${excerpt(column.name)}' is a computed value`,
      );
    }
  }

  /** A name of `$apply`: a compute() name, else a column or a path to one. */
  private resolve(ref: Pick<ColumnRef, 'name' | 'path'>): RowValue {
    if ((ref.path ?? []).length === 0) {
      const computed = this.computed.get(ref.name);
      if (computed !== undefined) return computed.planned;
    }
    return this.scope.ref(ref);
  }

  /** Without groupby(…) or aggregate(…): every column the caller may read, then the computed values. */
  private rows(): { groupBy: null; outputs: ApplyOutput[] } {
    const outputs: ApplyOutput[] = this.scope.view.columns.map((column) => {
      const value = this.scope.column(column.name);
      checkPlain(value, column.name, 1);
      return { kind: 'value', name: column.name, value, result: column };
    });
    for (const [name, { planned }] of this.computed) {
      outputs.push({ kind: 'value', name, value: planned, result: valueResult(planned) });
    }
    return { groupBy: null, outputs };
  }

  private groups(step: Grouping): { groupBy: RowValue[]; outputs: ApplyOutput[] } {
    const keys: RowValue[] = [];
    const outputs: OpenOutput[] = [];
    for (const ref of step.kind === 'groupby' ? step.refs : []) {
      const value = this.resolve(ref);
      checkPlain(value, written(ref), ref.position);
      if (keys.some((key) => sameValue(key, value))) {
        throw invalidQuery(
          `Invalid $apply at position ${ref.position}: groupby names '${excerpt(written(ref))}' twice`,
        );
      }
      keys.push(value);
      const output = { kind: 'value', name: ref.name, value, result: valueResult(value) } as const;
      place(outputs, ref.path ?? [], output, ref.position);
    }
    for (const aggregate of step.aggregates) {
      place(outputs, [], this.total(aggregate), aggregate.position);
    }
    return { groupBy: keys, outputs: outputs as ApplyOutput[] };
  }

  private total(aggregate: Aggregate): TotalOutput {
    const name = aggregate.alias;
    if (aggregate.kind === 'count') {
      return {
        kind: 'total',
        name,
        method: 'count',
        value: null,
        result: totalResult('count', null),
      };
    }
    const { ref, method } = aggregate;
    const value = this.resolve(ref);
    checkAggregate(method, value, written(ref), ref.position);
    return { kind: 'total', name, method, value, result: totalResult(method, value) };
  }

  /**
   * `$orderby` over what the answer holds: an aggregate's alias, or (grouped) a groupby value,
   * or (the rows themselves) any column or computed value; then the groupby values not named.
   */
  private order(
    items: readonly OrderItem[],
    groupBy: readonly RowValue[] | null,
    outputs: readonly ApplyOutput[],
  ): ApplyOrder[] {
    const order: ApplyOrder[] = [];
    for (const item of items) {
      const plain = (item.path ?? []).length === 0;
      const total = plain
        ? outputs.find((output) => output.kind === 'total' && output.name === item.column)
        : undefined;
      if (total !== undefined) {
        order.push({ by: total as TotalOutput, direction: item.direction });
        continue;
      }
      const value = this.resolve({ name: item.column, path: item.path });
      if (groupBy !== null && !groupBy.some((key) => sameValue(key, value))) {
        throw invalidQuery(
          `$orderby '${excerpt(written({ name: item.column, path: item.path }))}' is not in the answer of $apply: order by its groupby values and aliases`,
        );
      }
      order.push({ by: value, direction: item.direction });
    }
    for (const key of groupBy ?? []) {
      if (!order.some(({ by }) => by.kind !== 'total' && sameValue(by, key))) {
        order.push({ by: key, direction: 'asc' });
      }
    }
    return order;
  }

  /** The filter with compute() names standing for their functions (`y eq 2024` → `year(at) eq 2024`). */
  private withComputed(expr: FilterExpr): FilterExpr {
    if (this.computed.size === 0) return expr;
    const operand = (o: Operand): Operand =>
      o.kind === 'column' || o.kind === 'call' ? this.columnExpr(o) : o;
    switch (expr.kind) {
      case 'or':
      case 'and':
        return { kind: expr.kind, items: expr.items.map((item) => this.withComputed(item)) };
      case 'not':
        return { kind: 'not', expr: this.withComputed(expr.expr) };
      case 'compare':
        return { ...expr, left: operand(expr.left), right: operand(expr.right) };
      case 'in':
      case 'match':
        return { ...expr, column: this.columnExpr(expr.column) };
      case 'lambda':
        return expr.expr === null ? expr : { ...expr, expr: this.withComputed(expr.expr) };
    }
  }

  private columnExpr(expr: ColumnExpr): ColumnExpr {
    if (expr.kind === 'call') {
      this.notComputed(expr);
      return expr;
    }
    const computed = (expr.path ?? []).length === 0 ? this.computed.get(expr.name) : undefined;
    return computed === undefined ? expr : { ...computed.written, position: expr.position };
  }
}

/** Puts `output` into the nested objects of `path` (made on the way, shared by paths). */
function place(
  outputs: OpenOutput[],
  path: readonly string[],
  output: ApplyOutput,
  position: number,
): void {
  let level = outputs;
  for (const name of path) {
    const found = level.find((o) => o.name === name);
    if (found !== undefined && found.kind !== 'nested') throw twice(name, position);
    let nested = found as Extract<OpenOutput, { kind: 'nested' }> | undefined;
    if (nested === undefined) {
      nested = { kind: 'nested', name, outputs: [] };
      level.push(nested);
    }
    level = nested.outputs as OpenOutput[];
  }
  if (level.some((o) => o.name === output.name)) throw twice(output.name, position);
  level.push(output);
}

function twice(name: string, position: number) {
  return invalidQuery(
    `Invalid $apply at position ${position}: the answer would have the key '${excerpt(name)}' twice; give one of them another name`,
  );
}

/** The same value of a row: the same column of the same source, or the same function of it. */
function sameValue(a: RowValue, b: RowValue): boolean {
  if (a.kind === 'column')
    return b.kind === 'column' && a.source === b.source && a.column === b.column;
  return b.kind === 'call' && a.fn === b.fn && sameValue(a.arg, b.arg);
}

/** A name as the request wrote it: `customer/country`. */
function written(ref: Pick<ColumnRef, 'name' | 'path'>): string {
  return [...(ref.path ?? []), ref.name].join('/');
}
