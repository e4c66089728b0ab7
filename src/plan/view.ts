/**
 * What a caller sees of a table: the columns it may read (what `*` means), the relations it may
 * follow (to tables it may read), and the rows (its row condition). Every name a read resolves
 * goes through a view, so a hidden column or relation is unknown before any type check, the
 * same answer as a missing one. Without a policy every caller sees everything (openViewer); the
 * policy makes its own views (policy/views.ts).
 */
import type { ColumnInfo, Relation, TableInfo } from '../db/schema-types.js';
import type { PlannedFilter, Selection, Source } from './nodes.js';

export interface TableView {
  readonly table: TableInfo;
  /** The readable columns in table order: the table's own array when it is every column. */
  readonly columns: readonly ColumnInfo[];
  /**
   * The table at the top of a statement, alias `t0`: one object per table object, shared by
   * every view of it, so what is kept per source (a policy's where, policy/where.ts) is kept once.
   */
  readonly root: Source;
  /**
   * `$select=*` at the root: the readable columns of `root`, the same array for every read
   * through this view (a plain select list's text and serializer are kept per list).
   */
  readonly star: readonly Selection[];
  column(name: string): ColumnInfo | undefined;
  /** A relation the caller may follow, or undefined (none by that name, or its target hidden). */
  relation(name: string): Relation | undefined;
  /**
   * The caller's row condition on `source` (a source of this table), or null when it may read
   * every row. `plan` plans a filter against the source (policy wheres are filter text).
   */
  rows(source: Source): PlannedFilter | null;
}

/** The view of each table for one caller; null for a table it may not read. */
export type Viewer = (table: TableInfo) => TableView | null;

/**
 * The target's view when the caller may follow `relation` from a table it sees as `view`: the
 * target is a table it may read, and the key columns on both sides are columns it may read
 * (they tell which rows belong together, so a hidden one would leak through the pairing).
 * Null otherwise: for the caller the relation does not exist.
 */
export function followable(view: TableView, relation: Relation, viewer: Viewer): TableView | null {
  const target = viewer(relation.target);
  if (target === null) return null;
  const keysVisible = relation.on.every(
    ({ local, remote }) =>
      view.column(local.name) !== undefined && target.column(remote.name) !== undefined,
  );
  return keysVisible ? target : null;
}

/** A view of `parts.table`, its `*` made once from its columns. */
export function tableView(parts: Omit<TableView, 'star'>): TableView {
  const { root } = parts;
  const star = parts.columns.map(
    (column): Selection => ({
      kind: 'column',
      name: column.name,
      expr: { kind: 'column', source: root, column },
    }),
  );
  return { ...parts, star };
}

/**
 * The views without a policy, one per table object: the views of the one role a gateway
 * without a policy has, each a function of its table object alone (a schema re-read makes new
 * objects for what changed, and a view held weakly goes with its table): CONTRIBUTING.md, "What
 * a cache may key on". A policy's roles own their views (policy/views.ts).
 */
const fullViews = new WeakMap<TableInfo, TableView>();

/** Everything of the table. */
export function fullView(table: TableInfo): TableView {
  let view = fullViews.get(table);
  if (view === undefined) {
    view = tableView({
      table,
      columns: table.columns,
      root: { table, alias: 't0' },
      column: (name) => table.columnsByName.get(name),
      relation: (name) => table.relations.get(name),
      rows: () => null,
    });
    fullViews.set(table, view);
  }
  return view;
}

/** No policy: every table, column, relation and row. */
export const openViewer: Viewer = fullView;
