/**
 * A role's view of each table (plan/view.ts) under the policy: the table only when the role may
 * read it, only its read grant's columns, relations only to tables the role may read (the
 * planner asks for the target's view), and the read grant's where as the row condition. The
 * same for every caller of the role (a where's `@user` values are bound when the statement
 * runs), so views are made once per table object and role.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import type { Source } from '../plan/read-plan.js';
import { fullView, openViewer, type TableView, type Viewer } from '../plan/view.js';
import type { Grant, Policy } from './policy.js';

/** Who is asking, under which policy: put on the request by the policy gate (http/policy-gate.ts). */
export interface Access {
  readonly policy: Policy;
  readonly role: string;
  /** null for `anonymous`. */
  readonly user: import('../sql/user-values.js').UserValues | null;
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
