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
import { fullView, openViewer, type TableView, tableView, type Viewer } from '../plan/view.js';
import type { UserValues } from '../sql/user-values.js';
import type { Action, Grant, Policy } from './policy.js';

/** Who is asking, under which policy: put on the request by the policy gate (http/policy-gate.ts). */
export interface Access {
  readonly policy: Policy;
  readonly role: string;
  /** null for `anonymous`. */
  readonly user: UserValues | null;
}

/**
 * What a role of a policy sees, made once per table object and kept by the role (RoleViews),
 * so each view's key is everything that decides it: the policy, the role, the table object.
 */
class RoleViews {
  private readonly reads = new WeakMap<TableInfo, TableView | null>();
  private readonly readable = new WeakMap<TableInfo, TableInfo>();
  private readonly writable: Record<'create' | 'update', WeakMap<TableInfo, TableInfo>> = {
    create: new WeakMap(),
    update: new WeakMap(),
  };
  /** The role's read views: the same function every time, so what is kept per viewer is kept. */
  readonly viewer: Viewer = (table) => {
    let view = this.reads.get(table);
    if (view === undefined) {
      const grant = this.grant(table, 'read');
      view = grant === null ? null : grantedView(table, grant);
      this.reads.set(table, view);
    }
    return view;
  };

  constructor(
    private readonly policy: Policy,
    private readonly role: string,
  ) {}

  /** The table with only the columns the role may read (readView). */
  readView(table: TableInfo): TableInfo {
    let view = this.readable.get(table);
    if (view === undefined) {
      const grant = this.grant(table, 'read');
      view = grant === null || grant.columns === null ? table : narrowed(table, grant.columns);
      this.readable.set(table, view);
    }
    return view;
  }

  /** The table with only the columns a body of the action may name (writeView). */
  writeView(table: TableInfo, action: 'create' | 'update'): TableInfo {
    const kept = this.writable[action];
    let view = kept.get(table);
    if (view === undefined) {
      const read = this.grant(table, 'read');
      const write = this.grant(table, action);
      view =
        read === null || write === null || read.columns === null || write.columns === null
          ? table
          : narrowed(table, [...read.columns, ...write.columns]);
      kept.set(table, view);
    }
    return view;
  }

  /** The action's grant when the policy allows it (Policy.decide), else null. */
  private grant(table: TableInfo, action: Action): Grant | null {
    const decision = this.policy.decide(this.role, { kind: 'table', table: table.name, action });
    return decision.allowed ? decision.grant : null;
  }
}

/**
 * Each policy's roles, weakly by the policy object: a policy is never changed once read (each
 * read of a policy file makes a new one), so a role's views are good while its policy is used.
 */
const rolesByPolicy = new WeakMap<Policy, Map<string, RoleViews>>();

function roleViews({ policy, role }: Access): RoleViews {
  let byRole = rolesByPolicy.get(policy);
  if (byRole === undefined) {
    byRole = new Map();
    rolesByPolicy.set(policy, byRole);
  }
  let views = byRole.get(role);
  if (views === undefined) {
    views = new RoleViews(policy, role);
    byRole.set(role, views);
  }
  return views;
}

/** The views of the caller's role; every table whole without a policy. */
export function viewerFor(access: Access | null): Viewer {
  return access === null ? openViewer : roleViews(access).viewer;
}

function grantedView(table: TableInfo, grant: Grant): TableView {
  const whole = fullView(table);
  if (grant.columns === null && grant.where === null) return whole;
  const names = grant.columns === null ? null : new Set(grant.columns);
  const columns: readonly ColumnInfo[] =
    names === null ? table.columns : table.columns.filter((column) => names.has(column.name));
  const { where } = grant;
  return tableView({
    table,
    columns,
    root: whole.root,
    column:
      names === null
        ? whole.column
        : (name) => (names.has(name) ? table.columnsByName.get(name) : undefined),
    relation: whole.relation,
    // The where may read columns the role cannot: it is planned against the whole table.
    rows: where === null ? whole.rows : (source: Source) => where.plan(source),
  });
}

// ---- Writes ---------------------------------------------------------------------------------

/**
 * The table a narrowed copy (readView, writeView) stands for: not a memo but the one record of
 * where a copy came from, weakly by the copy, which is never changed once made.
 */
const bases = new WeakMap<TableInfo, TableInfo>();

/** The whole table a view (or the table itself) stands for. */
export function baseTable(table: TableInfo): TableInfo {
  return bases.get(table) ?? table;
}

/** The columns the role may read: what a read, and the key of update/delete, may name. */
export function readView(access: Access | null, table: TableInfo): TableInfo {
  return access === null ? table : roleViews(access).readView(table);
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
  return access === null ? table : roleViews(access).writeView(table, action);
}

function narrowed(table: TableInfo, granted: readonly string[]): TableInfo {
  const names = new Set(granted);
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
