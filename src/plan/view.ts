/**
 * What a caller sees of a table: the columns it may read (what `*` means), the relations it may
 * follow (to tables it may read), and the rows (its row condition). Every name a read resolves
 * goes through a view, so a hidden column or relation is unknown before any type check, the
 * same answer as a missing one. Without a policy every caller sees everything (openViewer); the
 * policy makes its own views (policy/views.ts).
 */
import type { ColumnInfo, Relation, TableInfo } from '../db/schema-types.js';
import type { PlannedFilter, Source } from './nodes.js';

export interface TableView {
  readonly table: TableInfo;
  /** The readable columns in table order: the table's own array when it is every column. */
  readonly columns: readonly ColumnInfo[];
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

const fullViews = new WeakMap<TableInfo, TableView>();

/** Everything of the table. */
export function fullView(table: TableInfo): TableView {
  let view = fullViews.get(table);
  if (view === undefined) {
    view = {
      table,
      columns: table.columns,
      column: (name) => table.columnsByName.get(name),
      relation: (name) => table.relations.get(name),
      rows: () => null,
    };
    fullViews.set(table, view);
  }
  return view;
}

/** No policy: every table, column, relation and row. */
export const openViewer: Viewer = fullView;

/**
 * A relation the caller may follow from a table it sees, and the target as it sees it; null when
 * there is none by that name, its target is hidden, or a key column on either side is (the key
 * tells which rows belong together, so a relation over a hidden key is hidden too).
 */
export function followable(
  view: TableView,
  viewer: Viewer,
  name: string,
): { readonly relation: Relation; readonly view: TableView } | null {
  const relation = view.relation(name);
  const target = relation === undefined ? null : viewer(relation.target);
  if (relation === undefined || target === null) return null;
  const visible = relation.on.every(
    ({ local, remote }) =>
      view.column(local.name) !== undefined && target.column(remote.name) !== undefined,
  );
  return visible ? { relation, view: target } : null;
}
