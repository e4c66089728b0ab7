/**
 * A write as one function per action: body and key → plan → policy → SQL → a WriteJob, the
 * statements, the guards that check them in their transaction, and whether it may run as one
 * autocommit statement (decided here, once: plan/exact-write.ts). The caller's `@user` values
 * are bound into every statement here. The execute stage (execute/write.ts) runs the job.
 */
import type { TableInfo } from '../db/schema-types.js';
import type { WriteOptions } from '../execute/write.js';
import { deleteIsExact, insertIsExact, updateIsExact } from '../plan/exact-write.js';
import { planDelete, planInsert, planUpdate } from '../plan/write-plan.js';
import {
  createdRowViolation,
  guardDelete,
  guardInsert,
  guardUpdate,
  updatedRowViolation,
} from '../policy/stage.js';
import { type Access, readView, writeView } from '../policy/views.js';
import type { KeyValue } from '../query/key-value.js';
import {
  type CompiledGuard,
  compileDelete,
  compileInsertBatches,
  compileInsertGuard,
  compileUpdate,
  compileUpdateGuard,
} from '../sql/compile-write.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { bindUser } from '../sql/user-values.js';

export interface WriteJob {
  readonly statements: readonly CompiledQuery[];
  readonly options: WriteOptions;
}

/**
 * `POST /table/<t>/create`. The body is planned against the role's write view (only columns it
 * may name: a hidden one is unknown, policy/views.ts).
 */
export function createJob(table: TableInfo, body: unknown, access: Access | null): WriteJob {
  const plan = guardInsert(access, planInsert(writeView(access, table, 'create'), body));
  // A policy's where beyond `col eq value`: checked after the INSERT, in its transaction.
  const guard = compileInsertGuard(plan);
  return {
    statements: compileInsertBatches(plan).map((query) => bound(query, access)),
    options: {
      unprepare: plan.rows.length > 1,
      autocommit: insertIsExact(plan),
      generated: generatedColumns(table),
      guards:
        guard === null
          ? []
          : [{ ...boundGuard(guard, access), error: () => createdRowViolation(plan.table) }],
    },
  };
}

/** `PUT /table/<t>/update(<key>,<value>)`. */
export function updateJob(
  table: TableInfo,
  match: KeyValue,
  body: unknown,
  access: Access | null,
): WriteJob {
  const planned = planUpdate(
    writeView(access, table, 'update'),
    match,
    body,
    readView(access, table),
  );
  const plan = guardUpdate(access, planned);
  // A policy's where on a column the update changes: checked after it, in its transaction.
  const guard = compileUpdateGuard(plan);
  return {
    statements: [bound(compileUpdate(plan), access)],
    options: {
      autocommit: updateIsExact(plan),
      generated: generatedColumns(table),
      guards:
        guard === null
          ? []
          : [{ ...boundGuard(guard, access), error: () => updatedRowViolation(plan.table) }],
    },
  };
}

/** `DELETE /table/<t>/delete(<key>,<value>)`. */
export function deleteJob(table: TableInfo, match: KeyValue, access: Access | null): WriteJob {
  const plan = guardDelete(access, planDelete(readView(access, table), match));
  return {
    statements: [bound(compileDelete(plan), access)],
    options: { autocommit: deleteIsExact(plan) },
  };
}

/** The table's generated columns, by name, once per table object (no allocation per write). */
const generatedByTable = new WeakMap<TableInfo, readonly string[]>();
function generatedColumns(table: TableInfo): readonly string[] {
  let names = generatedByTable.get(table);
  if (names === undefined) {
    names = table.columns.filter((column) => column.generated).map((column) => column.name);
    generatedByTable.set(table, names);
  }
  return names;
}

function bound(query: CompiledQuery, access: Access | null): CompiledQuery {
  return bindUser(query, access?.user ?? null);
}

/** A guard whose lookup and checks carry the caller's `@user` values. */
function boundGuard(guard: CompiledGuard, access: Access | null): CompiledGuard {
  return {
    lookup: guard.lookup === null ? null : bound(guard.lookup, access),
    queries: (outcome) => guard.queries(outcome)?.map((query) => bound(query, access)) ?? null,
  };
}
