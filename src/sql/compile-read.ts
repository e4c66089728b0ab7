/**
 * ReadPlan → `{ sql, params }` for the SELECT of a read and for its `$count`. Names enter the
 * text only through quoteIdent (and only names the plan resolved against the schema); every value
 * is a `?` parameter shaped for mysql2's `execute` (binary protocol). A read of one table names
 * its columns bare; one with relations qualifies every column by its source's alias, joins each
 * to-one relation it walks, and reads each expanded to-many relation as a correlated subquery
 * that gives one text value per parent row (docs/relations.md says why). Knows no HTTP.
 */
import mysql from 'mysql2';
import type { ServerKind } from '../db/pool.js';
import type { ColumnInfo } from '../db/schema-types.js';
import { readsRelatedRows, visitPlannedColumns } from '../plan/nodes.js';
import type {
  Join,
  PlannedFilter,
  PlannedOrder,
  ReadPlan,
  Selection,
  Source,
} from '../plan/read-plan.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import { compileFilter, joinClauses, type SqlContext, UNQUALIFIED } from './compile-filter.js';
import { compileSeek, keyExpression, readsAsSelected, SKIP_SLOT } from './compile-seek.js';
import type { CompiledQuery } from './compiled-query.js';
import { quoteIdent } from './quote.js';

export { compileFilter, compileValue } from './compile-filter.js';

const { TypedParameter } = mysql;

/** LIMIT for `$skip` without `$top`: the largest row count MySQL accepts (its manual's own idiom). */
export const NO_LIMIT = '18446744073709551615';

/**
 * The text of a select list of plain columns (no joins, one source), given the list and the
 * flavour: plainSelectList makes it; a caller that compiles the same list again (a view's `*`
 * on every request, plan/view.ts) passes its memo of it (pipeline/read.ts keptSelectText).
 */
export type PlainSelectText = (
  selections: readonly Selection[],
  flavour: ServerKind['flavour'],
) => string;

/** A plain select list's text. Per flavour: a spatial column's WKB is asked for differently. */
export const plainSelectList: PlainSelectText = (selections, flavour) => {
  const context = flavour === 'mariadb' ? UNQUALIFIED : { qualify: false, flavour };
  return selections
    .map((s) => {
      const { column } = (s as Extract<Selection, { kind: 'column' }>).expr;
      return asIs(quoteIdent(column.name), column, context);
    })
    .join(', ');
};

/**
 * A condition on the root table's columns compiled elsewhere, ANDed to the plan's filter: the
 * key of `read(<key>,<value>)`, the rows a write wrote (sql/compile-write.ts). Given how a
 * column of the root is written, it pushes its parameters and returns its text.
 */
export type RootCondition = (column: (info: ColumnInfo) => string, params: unknown[]) => string;

export function compileSelect(
  plan: ReadPlan,
  flavour: ServerKind['flavour'] = 'mariadb',
  where?: RootCondition,
  plainText: PlainSelectText = plainSelectList,
): CompiledQuery {
  const context = contextOf(plan, flavour);
  if (pagedBeforeJoins(plan)) return pageThenJoin(plan, context, plainText);
  const params: unknown[] = [];
  const select = selectList(plan.selections, context, params, plainText) + addedKeys(plan, context);
  let sql = `SELECT ${select} FROM ${fromClause(plan, context, params)}`;
  const conditions: string[] = [];
  if (plan.filter !== null) conditions.push(compileFilter(plan.filter, params, context));
  if (where !== undefined) {
    const root = (column: ColumnInfo) => columnRef(plan.source, column, context);
    conditions.push(`(${where(root, params)})`);
  }
  const continues = plan.page?.continues === true;
  const keys = plan.page?.keys ?? null;
  if (continues && keys !== null) {
    conditions.push(compileSeek(keys, plan.source, params, context));
  }
  if (conditions.length > 0) sql += ` WHERE ${conditions.join(' AND ')}`;
  if (plan.orderBy.length > 0) sql += ` ORDER BY ${orderList(plan.orderBy, context)}`;
  return { sql: sql + limitClause(plan, params), params };
}

/**
 * ` LIMIT ? OFFSET ?` of `$top` and `$skip` (either may be absent), or nothing; a continued page
 * (`$skiptoken`) skips the rows its token says, bound per request.
 */
export function limitClause(
  { top, skip, page }: Pick<ReadPlan, 'top' | 'skip'> & { readonly page?: ReadPlan['page'] },
  params: unknown[],
): string {
  const continues = page?.continues === true;
  let sql = '';
  // LIMIT values go as strings: mysql2 sends a JS number as DOUBLE, which MySQL 8.0.22+ rejects
  // in LIMIT ("Incorrect arguments to mysqld_stmt_execute"); a string is accepted by MySQL and MariaDB.
  if (top !== null) {
    sql += ' LIMIT ?';
    params.push(String(top));
  } else if (skip !== null || continues) {
    sql += ` LIMIT ${NO_LIMIT}`;
  }
  if (continues) {
    sql += ' OFFSET ?';
    params.push(SKIP_SLOT);
  } else if (skip !== null) {
    sql += ' OFFSET ?';
    params.push(String(skip));
  }
  return sql;
}

/**
 * Whether a page of the read is better read first and its related rows joined to it alone: it
 * skips rows (`$skip`), has joins, and neither its filter nor its order reads them (they only
 * add expanded to-one relations to each row). In one SELECT, MySQL joins every skipped row too
 * (`$skip=950&$top=50`: a thousand lookups for fifty rows); without `$skip` the join stops at
 * the page anyway and the derived table would only cost.
 */
function pagedBeforeJoins(plan: ReadPlan): boolean {
  if (plan.skip === null || plan.skip === 0 || plan.joins.length === 0) return false;
  const joined = new Set<Source>();
  const add = (joins: readonly Join[]) => {
    for (const join of joins) {
      joined.add(join.source);
      add(join.nested);
    }
  };
  add(plan.joins);
  if (plan.orderBy.some(({ expr }) => joined.has(expr.source))) return false;
  return plan.filter === null || !reads(plan.filter, joined);
}

/** Whether the filter reads a column of `sources`, or ranges over related rows of one. */
function reads(filter: PlannedFilter, sources: ReadonlySet<Source>): boolean {
  let found = false;
  visitPlannedColumns(filter, (column) => {
    if (sources.has(column.source)) found = true;
  });
  const parents = (f: PlannedFilter): boolean => {
    switch (f.kind) {
      case 'and':
      case 'or':
        return f.items.some(parents);
      case 'not':
        return parents(f.expr);
      case 'related':
        return sources.has(f.rows.parent) || (f.condition !== null && parents(f.condition));
      default:
        return false;
    }
  };
  return found || parents(filter);
}

/**
 * `SELECT … FROM (SELECT <columns> FROM t AS t0 WHERE … ORDER BY … LIMIT ? OFFSET ?) AS t0
 * LEFT JOIN …  ORDER BY …`: the page first, with the columns of its rows the rest reads (the
 * selected ones, the keys of relations, the order), then the joins and the expanded to-many
 * relations for its rows alone, in the same order.
 */
function pageThenJoin(
  plan: ReadPlan,
  context: SqlContext,
  plainText: PlainSelectText,
): CompiledQuery {
  const params: unknown[] = [];
  const root = plan.source;
  // Parameters in text order: the select list's subqueries come first. The page's sort keys
  // are columns of the order, which the page below gives.
  const select = selectList(plan.selections, context, params, plainText) + addedKeys(plan, context);
  const needed = new Set<ColumnInfo>();
  for (const selection of plan.selections) {
    if (selection.kind === 'column' && selection.expr.source === root) {
      needed.add(selection.expr.column);
    } else if (selection.kind === 'many' && selection.parent === root) {
      for (const { local } of selection.relation.on) needed.add(local);
    }
  }
  for (const join of plan.joins) {
    if (join.parent === root) for (const { local } of join.relation.on) needed.add(local);
  }
  for (const { expr } of plan.orderBy) needed.add(expr.column);
  const columns = root.table.columns.filter((column) => needed.has(column));
  let page = `SELECT ${columns.map((column) => columnRef(root, column, context)).join(', ')} FROM ${sourceText(root, context)}`;
  if (plan.filter !== null) page += ` WHERE ${compileFilter(plan.filter, params, context)}`;
  if (plan.orderBy.length > 0) page += ` ORDER BY ${orderList(plan.orderBy, context)}`;
  page += limitClause(plan, params);
  let sql = `SELECT ${select} FROM (${page}) AS ${quoteIdent(root.alias)}${joinClauses(plan.joins, params, context)}`;
  if (plan.orderBy.length > 0) sql += ` ORDER BY ${orderList(plan.orderBy, context)}`;
  return { sql, params };
}

/** Where a page's sort key is in each row: a slot of the select list (0-based). */
export interface KeySlot {
  readonly slot: number;
  readonly key: PlannedOrder;
  /** Read by a column added after the selected ones (not written into the answer). */
  readonly added: boolean;
}

/**
 * The slots of a paged read's sort keys, from which its last row's position is taken
 * (pipeline/read.ts): a key that is a selected column of the table is read from that column's
 * slot; any other (left out by `$select`, hidden by the caller's view, through a relation, an
 * ENUM's number) from a column added after the selected ones, which no serializer reads.
 */
export function pageKeySlots(plan: ReadPlan): KeySlot[] | null {
  const keys = plan.page?.keys ?? null;
  if (keys === null) return null;
  const selected = new Map<string, number>();
  let width = 0;
  for (const selection of plan.selections) {
    if (selection.kind === 'column' && selection.expr.source === plan.source) {
      if (!selected.has(selection.expr.column.name))
        selected.set(selection.expr.column.name, width);
    }
    width += slotWidth(selection);
  }
  return keys.map((key) => {
    const { source, column } = key.expr;
    const own =
      source === plan.source && readsAsSelected(column) ? selected.get(column.name) : undefined;
    return own === undefined
      ? { slot: width++, key, added: true }
      : { slot: own, key, added: false };
  });
}

/** The slots a selection takes in a row (types/rows.ts Field): a related object's marker and its own. */
function slotWidth(selection: Selection): number {
  if (selection.kind !== 'one') return 1;
  let width = 1;
  for (const inner of selection.selections) width += slotWidth(inner);
  return width;
}

/** `, <key>` for each sort key the select list does not give (pageKeySlots). */
function addedKeys(plan: ReadPlan, context: SqlContext): string {
  const slots = pageKeySlots(plan);
  if (slots === null) return '';
  let text = '';
  for (const { key, added } of slots) {
    if (added)
      text += `, ${keyExpression(columnRef(key.expr.source, key.expr.column, context), key.expr.column)}`;
  }
  return text;
}

/** `SELECT COUNT(*)` of the rows the filter matches, ignoring order, `$top` and `$skip`. */
export function compileCount(
  plan: ReadPlan,
  flavour: ServerKind['flavour'] = 'mariadb',
): CompiledQuery {
  const context = contextOf(plan, flavour);
  const params: unknown[] = [];
  let sql = `SELECT COUNT(*) FROM ${fromClause(plan, context, params)}`;
  if (plan.filter !== null) sql += ` WHERE ${compileFilter(plan.filter, params, context)}`;
  return { sql, params };
}

/** Columns are qualified when the read has more than one source: joins, children, lambdas. */
function contextOf(plan: ReadPlan, flavour: ServerKind['flavour']): SqlContext {
  const qualify =
    plan.joins.length > 0 ||
    plan.selections.some((s) => s.kind !== 'column') ||
    (plan.filter !== null && readsRelatedRows(plan.filter));
  return qualify || flavour !== 'mariadb' ? { qualify, flavour } : UNQUALIFIED;
}

/** The rows' sources: the table, then its to-one joins. */
export function fromClause(
  plan: Pick<ReadPlan, 'source' | 'joins'>,
  context: SqlContext,
  params: unknown[],
): string {
  return `${sourceText(plan.source, context)}${joinClauses(plan.joins, params, context)}`;
}

function sourceText(source: Source, context: SqlContext): string {
  const table = quoteIdent(source.table.name);
  return context.qualify ? `${table} AS ${quoteIdent(source.alias)}` : table;
}

export function columnRef(source: Source, column: ColumnInfo, context: SqlContext): string {
  const name = quoteIdent(column.name);
  return context.qualify ? `${quoteIdent(source.alias)}.${name}` : name;
}

function orderList(orderBy: readonly PlannedOrder[], context: SqlContext): string {
  return orderBy
    .map(
      ({ expr, direction }) =>
        `${columnRef(expr.source, expr.column, context)} ${direction === 'asc' ? 'ASC' : 'DESC'}`,
    )
    .join(', ');
}

/**
 * The select list, one expression per slot of the row (types/rows.ts RowShape): a column; for an
 * expanded to-one, its join's key column (NULL exactly when there is no related row) then its
 * selections; for an expanded to-many, its subquery.
 */
function selectList(
  selections: readonly Selection[],
  context: SqlContext,
  params: unknown[],
  plainText: PlainSelectText,
): string {
  if (!context.qualify) return plainText(selections, context.flavour);
  return slots(selections, context, params, asIs).join(', ');
}

/**
 * A column as the driver should read it (its kind's readSql, types/kinds.ts): as it is, or an
 * expression over it (a spatial one's WKB) named as the column.
 */
function asIs(column: string, info: ColumnInfo, context: SqlContext): string {
  const read = COLUMN_KINDS[info.kind].readSql(column, info, context.flavour);
  return read === column ? column : `${read} AS ${quoteIdent(info.name)}`;
}

/** The slot expressions of `selections`, each column's made by `value` (as is, or as text). */
function slots(
  selections: readonly Selection[],
  context: SqlContext,
  params: unknown[],
  value: (column: string, info: ColumnInfo, context: SqlContext) => string,
): string[] {
  const out: string[] = [];
  for (const selection of selections) {
    switch (selection.kind) {
      case 'column': {
        const { source, column } = selection.expr;
        out.push(value(columnRef(source, column, context), column, context));
        break;
      }
      case 'one': {
        const { join } = selection;
        const key = (join.relation.on[0] as { remote: ColumnInfo }).remote;
        const marker = columnRef(join.source, key, context);
        out.push(value(marker, key, context));
        out.push(...slots(selection.selections, context, params, value));
        break;
      }
      case 'many': {
        const rows = relatedRows(selection, context, params);
        // At the top, named by its alias: the result's metadata would carry the subquery's text.
        out.push(value === asIs ? `${rows} AS ${quoteIdent(selection.plan.source.alias)}` : rows);
        break;
      }
    }
  }
  return out;
}

/**
 * An expanded to-many relation for one parent row, as one text value: `<n>:<row>,<row>,…`, each
 * row a JSON array of its slots as text (textOf), `n` the number of rows (so a value MySQL cut
 * short is noticed), `0:` when there are none. Never NULL but when MySQL gave up on the value:
 * a CONCAT longer than max_allowed_packet is NULL (with a warning), which must not read as none. Ordered and paged per parent row inside
 * GROUP_CONCAT: MariaDB pages there (`LIMIT` in GROUP_CONCAT); MySQL has no such LIMIT, so there
 * the rows are paged in a derived table first (MySQL 8.0.14+ lets it name the parent row).
 */
function relatedRows(
  selection: Extract<Selection, { kind: 'many' }>,
  outer: SqlContext,
  params: unknown[],
): string {
  const { plan, relation, parent } = selection;
  const context: SqlContext = { qualify: true, flavour: outer.flavour };
  const paged = plan.top !== null || plan.skip !== null;
  const skip = limitValue(plan.skip ?? 0);
  const top = limitValue(plan.top ?? NO_LIMIT);
  if (paged && context.flavour === 'mysql') {
    const row = `JSON_ARRAY(${slots(plan.selections, context, params, textOf).join(', ')})`;
    const keys = plan.orderBy.map(
      ({ expr }, i) => `${columnRef(expr.source, expr.column, context)} AS ${quoteIdent(`o${i}`)}`,
    );
    let inner = `SELECT ${[`${row} AS ${quoteIdent('j')}`, ...keys].join(', ')} FROM ${fromClause(plan, context, params)}`;
    inner += ` WHERE ${correlation(plan, relation, parent, context, params)}`;
    if (plan.orderBy.length > 0) inner += ` ORDER BY ${orderList(plan.orderBy, context)}`;
    inner += ' LIMIT ?, ?';
    params.push(skip, top);
    const order = plan.orderBy
      .map(
        ({ direction }, i) =>
          `${quoteIdent('x')}.${quoteIdent(`o${i}`)} ${direction === 'asc' ? 'ASC' : 'DESC'}`,
      )
      .join(', ');
    return `(SELECT CONCAT(COUNT(*), ':', COALESCE(GROUP_CONCAT(${quoteIdent('x')}.${quoteIdent('j')}${order === '' ? '' : ` ORDER BY ${order}`} SEPARATOR ','), '')) FROM (${inner}) AS ${quoteIdent('x')})`;
  }
  let count = 'COUNT(*)';
  if (paged) {
    // Signed arithmetic (an unsigned parameter would make COUNT(*) - 1 out of range at 0).
    count = 'LEAST(GREATEST(COUNT(*) - ?, 0), ?)';
    params.push(String(plan.skip ?? 0), plan.top === null ? NO_LIMIT : String(plan.top));
  }
  const row = `JSON_ARRAY(${slots(plan.selections, context, params, textOf).join(', ')})`;
  let concat = row;
  if (plan.orderBy.length > 0) concat += ` ORDER BY ${orderList(plan.orderBy, context)}`;
  concat += " SEPARATOR ','";
  // Parameters in text order: the LIMIT's before those of the joins and the filter after it.
  if (paged) {
    concat += ' LIMIT ?, ?';
    params.push(skip, top);
  }
  const from = fromClause(plan, context, params);
  const where = correlation(plan, relation, parent, context, params);
  return `(SELECT CONCAT(${count}, ':', COALESCE(GROUP_CONCAT(${concat}), '')) FROM ${from} WHERE ${where})`;
}

/**
 * A row count for a LIMIT inside a subquery, as an integer-typed parameter: MariaDB's
 * GROUP_CONCAT LIMIT refuses anything else ("Limit only accepts integer values"), and mysql2
 * sends a JS number as DOUBLE and a string as text. One object per value, so that two compiles
 * of the same read give equal parameters (pipeline/read-shape.ts compares them).
 */
function limitValue(count: number | string): unknown {
  let typed = limitValues.get(count);
  if (typed === undefined) {
    if (limitValues.size >= 1024) limitValues.clear();
    typed = TypedParameter.BIGINT.unsigned(count);
    limitValues.set(count, typed);
  }
  return typed;
}

const limitValues = new Map<number | string, unknown>();

/** The child rows of one parent row: the relation's key pairs, then the child's filter. */
function correlation(
  plan: ReadPlan,
  relation: Extract<Selection, { kind: 'many' }>['relation'],
  parent: Source,
  context: SqlContext,
  params: unknown[],
): string {
  const parts = relation.on.map(
    ({ local, remote }) =>
      `${columnRef(plan.source, remote, context)} = ${columnRef(parent, local, context)}`,
  );
  if (plan.filter !== null) parts.push(compileFilter(plan.filter, params, context));
  return parts.join(' AND ');
}

/**
 * A value inside a JSON array, as text where JSON would lose something (its kind's tokenSql,
 * types/kinds.ts): the row codec (types/rows.ts) writes each value as the driver's value would
 * have been written.
 */
export function textOf(column: string, info: ColumnInfo, context: SqlContext): string {
  return COLUMN_KINDS[info.kind].tokenSql(column, info, context.flavour);
}
