/**
 * A role's view of the API description (`/openapi.json` shows a caller only the tables and
 * operations its role may use, docs/policies.md): per table the actions Policy.decide allows
 * and their columns, and the relations its reads may follow (the planner's own rule, through
 * the role's read views: policy/views.ts), and the routines it may call.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import type { DocumentTableView, DocumentView } from '../openapi/operation.js';
import { followable } from '../plan/view.js';
import type { Action, Grant, Policy } from './policy.js';
import { viewerFor } from './views.js';

function columnsOf(table: TableInfo, grant: Grant): readonly ColumnInfo[] {
  const names = grant.columns;
  return names === null ? table.columns : table.columns.filter((c) => names.includes(c.name));
}

export function documentView(policy: Policy, role: string): DocumentView {
  const granted = (table: TableInfo, action: Action): Grant | null => {
    const decision = policy.decide(role, { kind: 'table', table: table.name, action });
    return decision.allowed ? decision.grant : null;
  };
  const viewer = viewerFor({ policy, role, user: null });
  return {
    table: (table): DocumentTableView | null => {
      const read = granted(table, 'read');
      const readView = viewer(table);
      if (read === null || readView === null) return null;
      const create = granted(table, 'create');
      const update = granted(table, 'update');
      return {
        read: columnsOf(table, read),
        ...(create ? { create: columnsOf(table, create) } : {}),
        ...(update ? { update: columnsOf(table, update) } : {}),
        ...(granted(table, 'delete') ? { delete: true as const } : {}),
        relations: [...table.relations.values()].filter(
          (relation) => followable(readView, relation, viewer) !== null,
        ),
      };
    },
    routine: (routine) => policy.decide(role, { kind: 'routine', routine: routine.name }).allowed,
    mcp: policy.decide(role, { kind: 'mcp' }).allowed,
    upload: policy.mayFiles(role, 'upload'),
    download: policy.mayFiles(role, 'download'),
  };
}
