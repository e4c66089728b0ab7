/**
 * What one subscriber of the change feed may see of a table (docs/changes.md), compiled as a
 * read: the `$select` and `$filter` it gave, under its role's view, with its `@user` values
 * bound (pipeline/read.ts), and the read of the key columns it may see. The hub decides each
 * change with these reads (decide.ts), so a stream (http/changes.ts) and a webhook
 * (webhooks/delivery.ts) see exactly what the same read would answer.
 */

import type { TableInfo } from '../db/schema-types.js';
import { unsupportedInFeed } from '../errors.js';
import type { Flavour } from '../execute/database.js';
import type { CompiledRead } from '../pipeline/compiled-read.js';
import { bindRead, compileRead } from '../pipeline/read.js';
import { type Access, readView } from '../policy/views.js';
import { NO_KEY, type ReadGroup } from './decide.js';

/** The options a subscription takes: a read's `$select` and `$filter`. */
export interface SubscriptionOptions {
  readonly $select?: string;
  readonly $filter?: string;
}

export interface SubscriptionReads {
  readonly read: ReadGroup;
  readonly key: ReadGroup;
}

/** What a `$filter` that walks a relation (a path or a lambda) compiles to. */
const RELATED_SQL = /\bJOIN\b|\bEXISTS\s*\(/;

/**
 * The reads of a subscription; 400 UNSUPPORTED_IN_FEED for a `$filter` over relations or a
 * spatial column, and a read's own 400s for options it would refuse.
 */
export function compileSubscription(
  table: TableInfo,
  options: SubscriptionOptions,
  access: Access | null,
  flavour: Flavour,
): SubscriptionReads {
  if (options.$filter !== undefined) {
    // Over the table's own columns only: a related row's change is not this table's.
    const alone = compileRead(table, { $filter: options.$filter }, null, flavour);
    if (RELATED_SQL.test(alone.select.sql)) {
      throw unsupportedInFeed(
        "The change feed's $filter takes the table's own columns only, not paths or lambdas over relations",
      );
    }
  }
  const read = bindRead(compileRead(table, { ...options }, access, flavour), access);
  for (const field of read.fields) {
    if (field.kind === 'value' && field.column.kind === 'geometry') {
      throw unsupportedInFeed(
        `The change feed cannot send the spatial column '${field.name}' (the binary log reader does not keep its exact value): leave it out with $select`,
      );
    }
  }
  const visible = readView(access, table).columnsByName;
  const keyColumns = table.primaryKey.filter((name) => visible.has(name));
  const keyRead =
    keyColumns.length > 0
      ? compileRead(table, { $select: keyColumns.map(quoted).join(',') }, null, flavour)
      : null;
  return {
    read: { key: groupKey(read.select), read },
    key:
      keyRead === null
        ? { key: NO_KEY, read: emptyKey(read) }
        : { key: groupKey(keyRead.select), read: keyRead },
  };
}

function quoted(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

function groupKey(query: { sql: string; params: readonly unknown[] }): string {
  return `${query.sql}\u0000${JSON.stringify(query.params)}`;
}

/** A table without a key the caller may see: every event's key is `{}`. */
function emptyKey(read: CompiledRead): CompiledRead {
  return { ...read, serialize: () => '{}' };
}
