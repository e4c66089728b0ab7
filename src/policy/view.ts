/**
 * A role's view of a table: the table with only the columns the role may name in a request, as
 * the planner sees it. Planned against the view, a hidden column is unknown at its first lookup,
 * before any type rule could describe it, so every answer about it is byte for byte the one a
 * column that does not exist gets (400 UNKNOWN_COLUMN after the same schema re-read): in
 * `$select`, `$filter` (`year(cost)`, a date literal, `tolower`, `in`), `$orderby`, the key of
 * update/delete and a write body. Views share the table's ColumnInfo objects and are kept per
 * table object and grant (a schema re-read makes new ones), so a plan's table says exactly which
 * role's view it was made against; read caches keyed by table object stay exact per role.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import type { Grant } from './policy.js';
import type { Access } from './stage.js';

/** The table a view shows part of. */
const bases = new WeakMap<TableInfo, TableInfo>();
const readViews = new WeakMap<TableInfo, WeakMap<Grant, TableInfo>>();
const writeViews = new WeakMap<TableInfo, WeakMap<Grant, WeakMap<Grant, TableInfo>>>();

/** The whole table a view (or the table itself) stands for. */
export function baseTable(table: TableInfo): TableInfo {
  return bases.get(table) ?? table;
}

/** The columns the role may read: what a read, and the key of update/delete, may name. */
export function readView(access: Access | null, table: TableInfo): TableInfo {
  if (access === null) return table;
  const grant = access.policy.grant(access.role, table.name, 'read');
  if (grant === null || grant.columns === null) return table;
  let byGrant = readViews.get(table);
  if (byGrant === undefined) {
    byGrant = new WeakMap();
    readViews.set(table, byGrant);
  }
  let view = byGrant.get(grant);
  if (view === undefined) {
    view = viewOf(table, new Set(grant.columns));
    byGrant.set(grant, view);
  }
  return view;
}

/**
 * What a create or update body may name: the columns the role may read, and those the action
 * may write (a write-only column is the policy author's to grant). A readable column the action
 * may not write stays nameable: the policy stage answers it 403 FORBIDDEN.
 */
export function writeView(
  access: Access | null,
  table: TableInfo,
  action: 'create' | 'update',
): TableInfo {
  if (access === null) return table;
  const read = access.policy.grant(access.role, table.name, 'read');
  const write = access.policy.grant(access.role, table.name, action);
  if (read === null || write === null || read.columns === null || write.columns === null) {
    return table;
  }
  let byRead = writeViews.get(table);
  if (byRead === undefined) {
    byRead = new WeakMap();
    writeViews.set(table, byRead);
  }
  let byWrite = byRead.get(read);
  if (byWrite === undefined) {
    byWrite = new WeakMap();
    byRead.set(read, byWrite);
  }
  let view = byWrite.get(write);
  if (view === undefined) {
    view = viewOf(table, new Set([...read.columns, ...write.columns]));
    byWrite.set(write, view);
  }
  return view;
}

function viewOf(table: TableInfo, names: ReadonlySet<string>): TableInfo {
  const columns: ColumnInfo[] = table.columns.filter((column) => names.has(column.name));
  if (columns.length === table.columns.length) return table;
  const view: TableInfo = {
    ...table,
    columns,
    columnsByName: new Map(columns.map((column) => [column.name, column])),
  };
  bases.set(view, table);
  return view;
}
