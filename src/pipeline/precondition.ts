/**
 * If-Match on a write of one row by its key (docs/caching.md): the row's ETag is the tag of its
 * key read — `read(<key>,<value>)` as JSON, for the same role — so the check is that very read,
 * compiled as the key read route compiles it, run first in the write's own transaction with a
 * lock (SELECT … FOR UPDATE), its row serialized as the route serializes it and hashed. The lock
 * holds until the COMMIT, so no other write comes between the check and the write. Any front
 * door with keyed writes (REST's update/delete, OData's key routes) asks this function.
 */
import type { TableInfo } from '../db/schema-types.js';
import { ApiError, preconditionFailed } from '../errors.js';
import { etagOf } from '../etag.js';
import type { Flavour } from '../execute/database.js';
import type { WritePrecondition } from '../execute/write.js';
import { type Access, viewerFor } from '../policy/views.js';
import { type EntityTags, ifMatchHolds } from '../query/entity-tags.js';
import type { KeyValue } from '../query/key-value.js';
import type { CompiledRead } from './compiled-read.js';
import { compileKeyRead } from './read.js';

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
  const read = admit(compiled);
  const { serialize } = read;
  return {
    lock: { sql: `${read.select.sql} FOR UPDATE`, params: read.select.params },
    holds: (rows) => {
      const row = rows[0];
      return ifMatchHolds(tags, row === undefined ? null : etagOf(serialize(row)));
    },
    error: () => preconditionFailed(table.name),
  };
}
