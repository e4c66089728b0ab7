/**
 * A role's views of the tables under the policy. For reads (plan/view.ts): the table only when
 * the role may read it, only its read grant's columns, relations only to tables the role may
 * read (the planner asks for the target's view), and the read grant's where as the row
 * condition; the same for every caller of the role (a where's `@user` values are bound when the
 * statement runs), so views are made once per table object and role. For writes: the table with
 * only the columns a body or key may name (writeView, readView), so a hidden column is unknown
 * there too, before the value codec could describe it.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import type { Source } from '../plan/read-plan.js';
import { fullView, openViewer, type TableView, type Viewer } from '../plan/view.js';
import type { UserValues } from '../sql/user-values.js';
import type { Action, Grant, Policy } from './policy.js';

/** Who is asking, under which policy: put on the request by the policy gate (http/policy-gate.ts). */
export interface Access {
  readonly policy: Policy;
  readonly role: string;
  /** null for `anonymous`. */
  readonly user: UserValues | null;
}

const views = new WeakMap<TableInfo, Map<string, TableView | null>>();
const viewers = new WeakMap<Policy, Map<string, Viewer>>();

/** The views of the caller's role; every table whole without a policy. */
export function viewerFor(access: Access | null): Viewer {
  if (access === null) return openViewer;
  const { policy, role } = access;
  let byRole = viewers.get(policy);
  if (byRole === undefined) {
    byRole = new Map();
    viewers.set(policy, byRole);
  }
  let viewer = byRole.get(role);
  if (viewer === undefined) {
    viewer = (table) => viewOf(policy, role, table);
    byRole.set(role, viewer);
  }
  return viewer;
}

function viewOf(policy: Policy, role: string, table: TableInfo): TableView | null {
  let byRole = views.get(table);
  if (byRole === undefined) {
    byRole = new Map();
    views.set(table, byRole);
  }
  let view = byRole.get(role);
  if (view === undefined) {
    const decision = policy.decide(role, { kind: 'table', table: table.name, action: 'read' });
    view = decision.allowed ? grantedView(table, decision.grant as Grant) : null;
    byRole.set(role, view);
  }
  return view;
}

function grantedView(table: TableInfo, grant: Grant): TableView {
  const whole = fullView(table);
  if (grant.columns === null && grant.where === null) return whole;
  const names = grant.columns === null ? null : new Set(grant.columns);
  const columns: readonly ColumnInfo[] =
    names === null ? table.columns : table.columns.filter((column) => names.has(column.name));
  const { where } = grant;
  return {
    table,
    columns,
    column:
      names === null
        ? whole.column
        : (name) => (names.has(name) ? table.columnsByName.get(name) : undefined),
    relation: whole.relation,
    // The where may read columns the role cannot: it is planned against the whole table.
    rows: where === null ? whole.rows : (source: Source) => where.plan(source),
  };
}

// ---- Writes ---------------------------------------------------------------------------------

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
  const grant = grantFor(access, table, 'read');
  if (grant === null || grant.columns === null) return table;
  let byGrant = readViews.get(table);
  if (byGrant === undefined) {
    byGrant = new WeakMap();
    readViews.set(table, byGrant);
  }
  let view = byGrant.get(grant);
  if (view === undefined) {
    view = narrowed(table, new Set(grant.columns));
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
  const read = grantFor(access, table, 'read');
  const write = grantFor(access, table, action);
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
    view = narrowed(table, new Set([...read.columns, ...write.columns]));
    byWrite.set(write, view);
  }
  return view;
}

function narrowed(table: TableInfo, names: ReadonlySet<string>): TableInfo {
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

/** The action's grant when the policy allows it (Policy.decide), else null. */
function grantFor(access: Access, table: TableInfo, action: Action): Grant | null {
  const decision = access.policy.decide(access.role, { kind: 'table', table: table.name, action });
  return decision.allowed ? decision.grant : null;
}
