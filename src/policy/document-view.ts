/**
 * A role's view of the API description (CONTRACT §6: `/openapi.json` shows a caller only the
 * tables and operations its role may use): per table the granted actions and their columns.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import type { DocumentView, TableView } from '../openapi/document.js';
import type { Grant, Policy } from './policy.js';

function columnsOf(table: TableInfo, grant: Grant): readonly ColumnInfo[] {
  const names = grant.columns;
  return names === null ? table.columns : table.columns.filter((c) => names.includes(c.name));
}

export function documentView(policy: Policy, role: string): DocumentView {
  return {
    table: (table): TableView | null => {
      const read = policy.grant(role, table.name, 'read');
      if (read === null) return null;
      const create = policy.grant(role, table.name, 'create');
      const update = policy.grant(role, table.name, 'update');
      return {
        read: columnsOf(table, read),
        ...(create ? { create: columnsOf(table, create) } : {}),
        ...(update ? { update: columnsOf(table, update) } : {}),
        ...(policy.grant(role, table.name, 'delete') ? { delete: true as const } : {}),
      };
    },
    upload: policy.mayFiles(role, 'upload'),
    download: policy.mayFiles(role, 'download'),
  };
}
