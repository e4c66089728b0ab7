/**
 * If-Match on a write of one row by its key (docs/caching.md): the row's ETag is the tag of its
 * key read — `read(<key>,<value>)` as JSON, for the same role — so the check is that very read,
 * compiled as the key read route compiles it, run first in the write's own transaction with a
 * lock (SELECT … FOR UPDATE), its row serialized as the route serializes it and hashed. The lock
 * holds until the COMMIT, so no other write comes between the check and the write. Any front
 * door with keyed writes (REST's update/delete, OData's key routes) asks this function; an
 * OData entity of a composite key asks entityPrecondition, whose row is read by its key's filter.
 */
import type { TableInfo } from '../db/schema-types.js';
import { ApiError, preconditionFailed } from '../errors.js';
import { etagOf } from '../etag.js';
import type { Flavour } from '../execute/database.js';
import type { WritePrecondition } from '../execute/write.js';
import { planRead } from '../plan/read-plan.js';
import { uniqueKeysOf } from '../plan/unique-keys.js';
import { type Access, viewerFor } from '../policy/views.js';
import type { FilterExpr } from '../query/ast.js';
import { type EntityTags, ifMatchHolds } from '../query/entity-tags.js';
import type { KeyValue } from '../query/key-value.js';
import { parseReadOptions } from '../query/options.js';
import type { CompiledRead } from './compiled-read.js';
import { compileKeyRead, compileReadPlan } from './read.js';

const NO_OPTIONS = {};

/**
 * The If-Match check of the row `key` names in `table`, for `access`'s role: `tags` as the
 * client sent them. `admit` makes the compiled key read the caller's (its `@user` values in
 * place: ReadPipeline.admit). A key that is not the primary key or a unique column names no
 * one row, and a role that may not read the table sees no tag: both refuse at once (412).
 */
export function rowPrecondition(
  table: TableInfo,
  key: KeyValue,
  access: Access | null,
  tags: EntityTags,
  flavour: Flavour,
  admit: (read: CompiledRead) => CompiledRead,
): WritePrecondition {
  if (viewerFor(access)(table) === null) throw preconditionFailed(table.name);
  let compiled: CompiledRead;
  try {
    compiled = compileKeyRead(table, key, NO_OPTIONS, access, flavour);
  } catch (error) {
    // read(<key>,<value>) refuses a key that may match many rows, or null: no one row's tag.
    if (error instanceof ApiError && error.status === 400) {
      throw preconditionFailed(table.name, false);
    }
    throw error;
  }
  return locked(table, admit(compiled), tags);
}

/**
 * The If-Match check of the one row a composite key names (OData's `Set(k1=…,k2=…)`): `filter`
 * is each column of a unique key `eq` one value, read as the entity read reads it — the role's
 * whole row by that filter, serialized as a read without `$select` serializes it (the very
 * serializer of the key read: the same hash of the row) — first and locked in the write's
 * transaction. A filter that is not exactly one unique key's columns, each equal to one value,
 * names no one row: 412 at once, as a `$filter` write's If-Match.
 */
export function entityPrecondition(
  table: TableInfo,
  filter: FilterExpr,
  access: Access | null,
  tags: EntityTags,
  flavour: Flavour,
  admit: (read: CompiledRead) => CompiledRead,
): WritePrecondition {
  const viewer = viewerFor(access);
  if (viewer(table) === null) throw preconditionFailed(table.name);
  if (!namesOneRow(table, filter)) throw preconditionFailed(table.name, false);
  let compiled: CompiledRead;
  try {
    compiled = compileReadPlan(
      planRead({ ...parseReadOptions(NO_OPTIONS), filter }, table, viewer),
      flavour,
    );
  } catch (error) {
    // A key column the role may not read: no row of it has a tag the role was given.
    if (error instanceof ApiError && error.status === 400) {
      throw preconditionFailed(table.name, false);
    }
    throw error;
  }
  return locked(table, admit(compiled), tags);
}

/** The row read with a lock, and whether its tag is one of `tags` (none for no row, or many). */
function locked(table: TableInfo, read: CompiledRead, tags: EntityTags): WritePrecondition {
  const { serialize } = read;
  return {
    lock: { sql: `${read.select.sql} FOR UPDATE`, params: read.select.params },
    holds: (rows) => {
      const row = rows.length === 1 ? rows[0] : undefined;
      return ifMatchHolds(tags, row === undefined ? null : etagOf(serialize(row)));
    },
    error: () => preconditionFailed(table.name),
  };
}

/** Whether `filter` is `c eq <value>` for exactly the columns of one of the table's unique keys. */
function namesOneRow(table: TableInfo, filter: FilterExpr): boolean {
  const named = new Set<string>();
  const terms = (expr: FilterExpr): boolean => {
    if (expr.kind === 'and') return expr.items.every(terms);
    if (expr.kind !== 'compare' || expr.op !== 'eq') return false;
    const { left, right } = expr;
    if (left.kind !== 'column' || left.path !== undefined || named.has(left.name)) return false;
    if (right.kind === 'column' || right.kind === 'call' || right.kind === 'user') return false;
    if (right.kind === 'null') return false;
    named.add(left.name);
    return true;
  };
  if (!terms(filter)) return false;
  return uniqueKeysOf(table).some(
    (key) => key.length === named.size && key.every((column) => named.has(column.name)),
  );
}
