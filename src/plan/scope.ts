/**
 * Name resolution while planning a read: a scope is one source of the read (a table under its
 * alias) as the caller sees it. Columns resolve against the caller's view; a path through to-one
 * relations becomes a join of the scope's level (one SELECT: the top read, or a child read of a
 * to-many relation), made once per relation walked; a lambda's variable names the related rows
 * of its to-many relation. Knows no SQL.
 */
import type { ColumnInfo, Relation, TableInfo } from '../db/schema-types.js';
import {
  filterSyntax,
  invalidQuery,
  unknownColumn,
  unknownRelation,
  unknownTable,
} from '../errors.js';
import type {
  ColumnExpr,
  ColumnRef,
  ExpandItem,
  ExpandOptions,
  FilterExpr,
  FilterLiteral,
  Lambda,
  NonNullFilterLiteral,
  Operand,
  OrderItem,
} from '../query/ast.js';
import {
  checkCall,
  checkFilterable,
  checkMatchCall,
  checkMatchColumn,
  checkTemporal,
  type Described,
  describeCall,
  describeColumn,
  describeLiteral,
  typedString,
} from './filter-types.js';
import {
  both,
  type Join,
  type PlannedColumn,
  type PlannedColumnExpr,
  type PlannedFilter,
  type PlannedLiteral,
  type PlannedOperand,
  type PlannedOrder,
  type ReadPlan,
  type Selection,
  type Source,
} from './nodes.js';
import { followable, fullView, type TableView, type Viewer } from './view.js';

/** The joins of one SELECT, by the relation walked and the source it was walked from. */
class Level {
  readonly joins: Join[] = [];
  readonly byKey = new Map<string, Join>();
}

/** Alias numbering, shared by every level of one read so that no two sources share an alias. */
interface Aliases {
  next: number;
}

/** A table at the top of a statement, alias `t0`: the same object for every statement of it. */
export function rootSource(table: TableInfo): Source {
  return fullView(table).root;
}

const NO_VARIABLES: ReadonlyMap<string, Scope> = new Map();

export class Scope {
  private constructor(
    readonly source: Source,
    readonly view: TableView,
    private readonly viewer: Viewer,
    private readonly level: Level,
    private readonly aliases: Aliases,
    private readonly variables: ReadonlyMap<string, Scope>,
  ) {}

  /**
   * A filter planned against one source, without relations: a policy's row condition on a
   * table (policy/views.ts), wherever the table stands in a read.
   */
  static filterOn(expr: FilterExpr, source: Source, view: TableView): PlannedFilter {
    const scope = new Scope(source, view, () => null, new Level(), { next: 0 }, NO_VARIABLES);
    return scope.filter(expr);
  }

  /** The top of a read of `table`. */
  static root(table: TableInfo, viewer: Viewer): Scope {
    const view = viewer(table);
    if (view === null) throw unknownTable(table.name);
    return new Scope(view.root, view, viewer, new Level(), { next: 1 }, NO_VARIABLES);
  }

  /** The read this scope's options ask for: select, then filter, order and expand, in that order. */
  plan(options: ExpandOptions, count: boolean): ReadPlan {
    const selections =
      options.select === '*'
        ? this.allColumns()
        : options.select.map(
            (name): Selection => ({ kind: 'column', name, expr: this.column(name) }),
          );
    const filter = options.filter === null ? null : this.filter(options.filter);
    const orderBy = options.orderBy.map((item) => this.order(item));
    const expanded = this.expand(options.expand ?? []);
    return {
      source: this.source,
      joins: this.level.joins,
      selections: expanded.length === 0 ? selections : [...selections, ...expanded],
      filter: both(filter, this.view.rows(this.source)),
      orderBy,
      top: options.top,
      skip: options.skip,
      count,
      page: null,
    };
  }

  private allColumns(): readonly Selection[] {
    if (this.source === this.view.root) return this.view.star;
    return this.view.columns.map(
      (column): Selection => ({ kind: 'column', name: column.name, expr: this.own(column) }),
    );
  }

  private own(column: ColumnInfo): PlannedColumn {
    return { kind: 'column', source: this.source, column };
  }

  /** The to-one joins made so far at this scope's level (one SELECT), parents first. */
  get joins(): readonly Join[] {
    return this.level.joins;
  }

  /**
   * A column of this scope's own table. `quoted`: the filter named it in double quotes, so an
   * unknown one may have been meant as a string (the answer hints at single quotes).
   */
  column(name: string, quoted = false): PlannedColumn {
    const column = this.view.column(name);
    if (column === undefined) {
      const known = this.view.columns.map((c) => c.name);
      throw unknownColumn(this.source.table.name, name, known, quoted);
    }
    return this.own(column);
  }

  /** A column, through the path before it: a lambda's variable first, then to-one relations. */
  ref(ref: Pick<ColumnRef, 'name' | 'path' | 'quoted'>): PlannedColumn {
    const path = ref.path ?? [];
    if (path.length === 0) return this.column(ref.name, ref.quoted === true);
    const [first, ...rest] = path as [string, ...string[]];
    const variable = this.variables.get(first);
    const start = variable ?? this;
    return start.walk(variable === undefined ? path : rest).column(ref.name);
  }

  private order(item: OrderItem): PlannedOrder {
    return { expr: this.ref({ name: item.column, path: item.path }), direction: item.direction };
  }

  /** The scope at the end of a path of to-one relations from this one (joins made on the way). */
  private walk(path: readonly string[]): Scope {
    let scope: Scope = this;
    for (const name of path) {
      const { relation, view } = scope.follow(name);
      if (relation.kind === 'many') {
        throw invalidQuery(
          `Relation '${name}' of table '${scope.source.table.name}' leads to many rows: filter them with ${name}/any(x: …) or ${name}/all(x: …), read them with $expand=${name}`,
        );
      }
      scope = scope.join(relation, view, null);
    }
    return scope;
  }

  /** A relation the caller may follow from this scope's table, and its target as the caller sees it. */
  private follow(name: string): { relation: Relation; view: TableView } {
    const found = this.visibleRelation(name);
    if (found === null) {
      // A "did you mean" names only relations the caller may follow.
      const known = [...this.source.table.relations.keys()].filter(
        (other) => this.visibleRelation(other) !== null,
      );
      throw unknownRelation(this.source.table.name, name, known);
    }
    return found;
  }

  /** The relation and its target's view, when the caller may follow it; else null. */
  private visibleRelation(name: string): { relation: Relation; view: TableView } | null {
    const relation = this.view.relation(name);
    const view = relation === undefined ? null : followable(this.view, relation, this.viewer);
    return relation === undefined || view === null ? null : { relation, view };
  }

  /**
   * The scope of a to-one relation's row, joined at this level: one join per relation and
   * parent, unless `filter` (an expanded relation's `$filter`) makes it a join of its own. The
   * paths that filter walks are joined inside that join (`LEFT JOIN (t1 LEFT JOIN t2 …) ON …`),
   * since its condition reads their rows; later paths and expansions from the related row join
   * at this level as usual.
   */
  private join(relation: Relation, view: TableView, filter: FilterExpr | null): Scope {
    const key = `${this.source.alias}/${relation.name}`;
    const shared = filter === null ? this.level.byKey.get(key) : undefined;
    if (shared !== undefined) return this.at(shared.source, view);
    const source = this.newSource(relation.target);
    const made: { -readonly [K in keyof Join]: Join[K] } = {
      source,
      relation,
      parent: this.source,
      filter: view.rows(source),
      nested: [],
    };
    this.level.joins.push(made);
    if (filter === null) {
      this.level.byKey.set(key, made);
    } else {
      const inner = new Scope(source, view, this.viewer, new Level(), this.aliases, this.variables);
      made.filter = both(inner.filter(filter), made.filter);
      made.nested = inner.level.joins;
    }
    return this.at(source, view);
  }

  private at(source: Source, view: TableView): Scope {
    return new Scope(source, view, this.viewer, this.level, this.aliases, this.variables);
  }

  private newSource(table: TableInfo): Source {
    return { table, alias: `t${this.aliases.next++}` };
  }

  /** The scope of the rows of a to-many relation: a SELECT of its own, with its own joins. */
  private child(relation: Relation, view: TableView): Scope {
    const source = this.newSource(relation.target);
    return new Scope(source, view, this.viewer, new Level(), this.aliases, this.variables);
  }

  // ---- $expand -------------------------------------------------------------------------

  private expand(items: readonly ExpandItem[]): Selection[] {
    const seen = new Set<string>();
    return items.map((item) => {
      const [name, ...rest] = item.path as [string, ...string[]];
      if (seen.has(name)) {
        throw invalidQuery(
          `$expand names relation '${name}' more than once; give its options in one item`,
        );
      }
      seen.add(name);
      const options: ExpandOptions =
        rest.length === 0
          ? item.options
          : {
              select: '*',
              filter: null,
              orderBy: [],
              top: null,
              skip: null,
              expand: [{ path: rest, options: item.options }],
            };
      return this.expandOne(name, options);
    });
  }

  private expandOne(name: string, options: ExpandOptions): Selection {
    const { relation, view } = this.follow(name);
    if (relation.kind === 'one') {
      for (const [given, option] of [
        [options.top !== null, '$top'],
        [options.skip !== null, '$skip'],
        [options.orderBy.length > 0, '$orderby'],
      ] as const) {
        if (given) {
          throw invalidQuery(
            `${option} does not apply to '${name}': it is a to-one relation (one related row at most)`,
          );
        }
      }
      const scope = this.join(relation, view, options.filter);
      const own = scope.planSelections(options);
      return { kind: 'one', name, join: scope.joinOf(), selections: own };
    }
    const child = this.child(relation, view);
    const planned = child.plan(options, false);
    const plan =
      planned.orderBy.length > 0 ? planned : { ...planned, orderBy: child.primaryKeyOrder() };
    return { kind: 'many', name, relation, parent: this.source, plan };
  }

  /** The selections of an expanded to-one relation's row (its filter went into its join). */
  private planSelections(options: ExpandOptions): Selection[] {
    const selections =
      options.select === '*'
        ? this.allColumns()
        : options.select.map(
            (name): Selection => ({ kind: 'column', name, expr: this.column(name) }),
          );
    const expanded = this.expand(options.expand ?? []);
    return [...selections, ...expanded];
  }

  /** The join this scope's source was made by. */
  private joinOf(): Join {
    return this.level.joins.find((join) => join.source === this.source) as Join;
  }

  /** The related table's primary key, ascending: the order of a to-many array without `$orderby`. */
  private primaryKeyOrder(): PlannedOrder[] {
    return this.source.table.primaryKey.map((name) => ({
      expr: this.own(this.source.table.columnsByName.get(name) as ColumnInfo),
      direction: 'asc' as const,
    }));
  }

  // ---- $filter --------------------------------------------------------------------------

  filter(expr: FilterExpr): PlannedFilter {
    switch (expr.kind) {
      case 'or':
      case 'and':
        return { kind: expr.kind, items: expr.items.map((item) => this.filter(item)) };
      case 'not':
        return { kind: 'not', expr: this.filter(expr.expr) };
      case 'compare':
        return this.compare(expr);
      case 'in': {
        const column = this.columnExpr(expr.column);
        const position = positionOf(expr.column);
        if (column.kind === 'column') checkFilterable(column.column, position);
        const values = expr.values
          .filter((value): value is NonNullFilterLiteral => value.kind !== 'null')
          .map((value) => typedLiteral(value, column, position) as PlannedLiteral);
        return { kind: 'in', column, values, orNull: values.length < expr.values.length };
      }
      case 'match': {
        const column = this.columnExpr(expr.column);
        if (column.kind === 'column') {
          checkFilterable(column.column, positionOf(expr.column));
          checkMatchColumn(expr.fn, column.column, positionOf(expr.column));
        }
        if (column.kind === 'call') {
          checkMatchCall(expr.fn, describe(column), positionOf(expr.column));
        }
        return { kind: 'match', fn: expr.fn, column, value: expr.value };
      }
      case 'lambda':
        return this.lambda(expr);
    }
  }

  private compare(expr: Extract<FilterExpr, { kind: 'compare' }>): PlannedFilter {
    const { op, left, right, position } = expr;
    // Resolve left to right so the first unknown column named is the one reported.
    const l = this.operand(left);
    const r = this.operand(right);
    if (l.kind === 'null' || r.kind === 'null') {
      if (op === 'eq' || op === 'ne') {
        return { kind: 'isNull', operand: l.kind === 'null' ? r : l, negated: op === 'ne' };
      }
      throw filterSyntax(
        `Invalid $filter at position ${position}: null cannot be compared with '${op}'; use 'eq null' or 'ne null'`,
      );
    }
    for (const [operand, planned] of [
      [left, l],
      [right, r],
    ] as const) {
      if (planned.kind === 'column')
        checkFilterable(planned.column, positionOf(operand as ColumnExpr));
    }
    return {
      kind: 'compare',
      op,
      left: typedLiteral(l, r, position),
      right: typedLiteral(r, l, position),
    };
  }

  private operand(operand: Operand): PlannedColumnExpr | FilterLiteral {
    return operand.kind === 'column' || operand.kind === 'call'
      ? this.columnExpr(operand)
      : operand;
  }

  /** A column, or `fn(column)` with the column checked to be of a type `fn` takes. */
  private columnExpr(expr: ColumnExpr): PlannedColumnExpr {
    if (expr.kind === 'column') return this.ref(expr);
    const arg = this.ref(expr.column);
    checkCall(expr.fn, arg.column, expr.position);
    return { kind: 'call', fn: expr.fn, arg };
  }

  /** `path/any(x: …)`, `path/all(x: …)`: the to-ones of the path walked, the last one to-many. */
  private lambda(expr: Lambda): PlannedFilter {
    const path = expr.path;
    const last = path[path.length - 1] as string;
    const [first] = path;
    const variable = first === undefined ? undefined : this.variables.get(first);
    const start = variable ?? this;
    const from = start.walk(path.slice(variable === undefined ? 0 : 1, -1));
    const { relation, view } = from.follow(last);
    if (relation.kind === 'one') {
      throw invalidQuery(
        `${expr.op}() takes a to-many relation, and '${last}' of table '${from.source.table.name}' is a to-one relation: compare its columns directly (${last}/<column>)`,
      );
    }
    const child = from.child(relation, view);
    const rows = {
      relation,
      parent: from.source,
      source: child.source,
      joins: child.level.joins,
      filter: view.rows(child.source),
    };
    if (expr.expr === null || expr.variable === null)
      return { kind: 'related', op: expr.op, rows, condition: null };
    const variables = new Map(this.variables);
    variables.set(expr.variable, child);
    const body = new Scope(
      this.source,
      this.view,
      this.viewer,
      this.level,
      this.aliases,
      variables,
    );
    const condition = body.filter(expr.expr);
    return { kind: 'related', op: expr.op, rows, condition };
  }
}

function positionOf(expr: ColumnExpr): number {
  return expr.kind === 'column' ? expr.position : expr.position;
}

/**
 * One side of a comparison as planned: a date/time literal must
 * meet an operand of a matching type; a quoted string meeting a number, date or time becomes
 * the literal of that type it spells, or is refused (filter-types.ts typedString). Only then is
 * the other side described, so plain comparisons pay a `kind` test or two.
 */
function typedLiteral(
  side: PlannedOperand,
  other: PlannedOperand,
  position: number,
): PlannedOperand {
  switch (side.kind) {
    case 'date':
    case 'datetime':
    case 'timeofday':
      checkTemporal(side, describe(other), position);
      return side;
    case 'string':
      return other.kind === 'column' || other.kind === 'call'
        ? typedString(side, describe(other), position)
        : side;
    default:
      return side;
  }
}

function describe(operand: PlannedOperand): Described {
  switch (operand.kind) {
    case 'column':
      return describeColumn(operand.column);
    case 'call':
      return describeCall(operand.fn, operand.arg.column);
    default:
      return describeLiteral(operand);
  }
}
