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
import type { Access } from '../policy/views.js';
import type { KeyValue } from '../query/key-value.js';
import {
  compileDelete,
  compileInsertBatches,
  compileInsertRechecks,
  compileUpdate,
  compileUpdateRecheck,
} from '../sql/compile-write.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { bindUser } from '../sql/user-values.js';

export interface WriteJob {
  readonly statements: readonly CompiledQuery[];
  readonly options: WriteOptions;
}

/** `POST /table/<t>/create`. */
export function createJob(table: TableInfo, body: unknown, access: Access | null): WriteJob {
  const plan = guardInsert(access, planInsert(table, body));
  // A policy's where beyond `col eq value`: checked after the INSERT, in its transaction.
  const guards = compileInsertRechecks(plan).map((query) => ({
    query: bound(query, access),
    error: () => createdRowViolation(plan.table),
  }));
  return {
    statements: compileInsertBatches(plan).map((query) => bound(query, access)),
    options: { unprepare: plan.rows.length > 1, autocommit: insertIsExact(plan), guards },
  };
}

/** `PUT /table/<t>/update(<key>,<value>)`. */
export function updateJob(
  table: TableInfo,
  match: KeyValue,
  body: unknown,
  access: Access | null,
): WriteJob {
  const plan = guardUpdate(access, planUpdate(table, match, body));
  // A policy's where on a column the update changes: checked after it, in its transaction.
  const recheck = compileUpdateRecheck(plan);
  return {
    statements: [bound(compileUpdate(plan), access)],
    options: {
      autocommit: updateIsExact(plan),
      guards:
        recheck === null
          ? []
          : [{ query: bound(recheck, access), error: () => updatedRowViolation(plan.table) }],
    },
  };
}

/** `DELETE /table/<t>/delete(<key>,<value>)`. */
export function deleteJob(table: TableInfo, match: KeyValue, access: Access | null): WriteJob {
  const plan = guardDelete(access, planDelete(table, match));
  return {
    statements: [bound(compileDelete(plan), access)],
    options: { autocommit: deleteIsExact(plan) },
  };
}

function bound(query: CompiledQuery, access: Access | null): CompiledQuery {
  return bindUser(query, access?.user ?? null);
}
