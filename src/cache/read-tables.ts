/**
 * Every table a read's answer depends on, from its plan (docs/caching.md): the answer cache
 * (answer-cache.ts) drops the answer when the change feed sees any of them change. Found by
 * walking the whole plan object, not by naming its parts: every table a plan reads is a
 * TableInfo somewhere in it (a Source of the root, a join of a path or an expanded to-one, the
 * child read of an expanded to-many, a lambda's related rows, an `$apply` step, a policy row
 * condition's path), so a node kind added later is covered without a change here. A TableInfo
 * is collected, not walked into (its relations name tables the read does not read). Null when
 * one of them is a view: the binary log names the base tables a view reads, not the view, so
 * an answer of a view is never kept.
 */
import type { TableInfo } from '../db/schema-types.js';

function isTable(value: object): value is TableInfo {
  const table = value as Partial<TableInfo>;
  return (
    typeof table.name === 'string' &&
    (table.kind === 'table' || table.kind === 'view') &&
    table.columnsByName instanceof Map &&
    Array.isArray(table.primaryKey)
  );
}

/** The names of the tables in `plan`, sorted; null when one is a view. */
export function tablesOf(plan: object): readonly string[] | null {
  const names = new Set<string>();
  const seen = new Set<object>();
  let view = false;
  const walk = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (isTable(value)) {
      if (value.kind === 'view') view = true;
      names.add(value.name);
      return;
    }
    if (value instanceof Map) {
      for (const item of value.values()) walk(item);
      return;
    }
    if (value instanceof Set || Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    for (const key in value) walk((value as Record<string, unknown>)[key]);
  };
  walk(plan);
  return view ? null : [...names].sort();
}
