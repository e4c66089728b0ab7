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
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { COLUMN_KINDS } from '../types/kinds.js';

function isTable(value: object): value is TableInfo {
  const table = value as Partial<TableInfo>;
  return (
    typeof table.name === 'string' &&
    (table.kind === 'table' || table.kind === 'view') &&
    table.columnsByName instanceof Map &&
    Array.isArray(table.primaryKey)
  );
}

/**
 * Visits every object reachable from `plan` once: each TableInfo with `table` (collected, not
 * walked into), every other object with `node`.
 */
function walkPlan(plan: object, table: (found: TableInfo) => void, node?: (found: object) => void) {
  const seen = new Set<object>();
  const walk = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (isTable(value)) {
      table(value);
      return;
    }
    node?.(value);
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
}

/** The names of the tables in `plan`, sorted; null when one is a view. */
export function tablesOf(plan: object): readonly string[] | null {
  const names = new Set<string>();
  let view = false;
  walkPlan(plan, (table) => {
    if (table.kind === 'view') view = true;
    names.add(table.name);
  });
  return view ? null : [...names].sort();
}

/**
 * A row of a table by one of its keys, as the answer cache drops one-row answers by: the table,
 * the key column and the key's value as integer text (integerKeyText).
 */
export function rowIdentity(table: string, column: string, value: string): string {
  return `${table}\u0000${column}\u0000${value}`;
}

/**
 * An integer as one text for every form it comes in (the key of a request, plain decimal text;
 * a row image's value, a number, a string past 2^53, or a bigint); null for anything else.
 */
export function integerKeyText(value: unknown): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string' && /^[+-]?\d{1,40}$/.test(value)) return BigInt(value).toString();
  return null;
}

/** The plan's Sources (a table under an alias): the root's, and each join's, child's, lambda's. */
function sourceCount(plan: object): number {
  let sources = 0;
  walkPlan(
    plan,
    () => {},
    (node) => {
      const source = node as { table?: unknown; alias?: unknown };
      const table = source.table;
      if (typeof source.alias === 'string' && typeof table === 'object' && table !== null) {
        if (isTable(table)) sources++;
      }
    },
  );
  return sources;
}

/**
 * The one row a key read reads, when its answer depends on that row alone (rowIdentity): the
 * key an integer column (a text key would be compared by its collation, which the row images
 * of the binary log cannot be matched by), and the plan of one Source — no `$expand`, no path
 * or lambda in the role's row condition, whose other rows (of this table too) may change the
 * answer. Null otherwise: the answer is dropped by any change to its tables.
 */
export function rowOf(
  plan: object,
  table: TableInfo,
  column: ColumnInfo,
  value: { readonly kind: string; readonly text?: string },
): string | null {
  if (!COLUMN_KINDS[column.kind].rowImageKey) return null;
  if (value.kind !== 'number' || value.text === undefined) return null;
  const tables = tablesOf(plan);
  if (tables === null || tables.length !== 1 || tables[0] !== table.name) return null;
  if (sourceCount(plan) !== 1) return null;
  const text = integerKeyText(value.text);
  return text === null ? null : rowIdentity(table.name, column.name, text);
}
