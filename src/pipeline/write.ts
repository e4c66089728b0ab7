/**
 * A write as one function per action: body and key or `$filter` → plan → policy → SQL → a
 * WriteJob: the statements, the guards that check them in their transaction, a row limit, the
 * read-back of the written rows, and how it runs — one autocommit statement (`alone`, when the
 * plan proves it exact: plan/exact-write.ts) or a transaction — decided here, once. The caller's
 * `@user` values are bound into every statement here. The execute stage (execute/write.ts) runs
 * the job; the route answers with what it says and the preferences it honoured (docs/writes.md).
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import type { Flavour } from '../execute/database.js';
import {
  asTransaction,
  type WriteGuard,
  type WriteJob,
  type WritePrecondition,
} from '../execute/write.js';
import { deleteIsExact, insertIsExact, updateIsExact } from '../plan/exact-write.js';
import { planRead, type ReadPlan } from '../plan/read-plan.js';
import type { Viewer } from '../plan/view.js';
import { isObject } from '../plan/write-body.js';
import {
  type InsertPlan,
  planDelete,
  planInsert,
  planUpdate,
  type WriteTarget,
} from '../plan/write-plan.js';
import { insertedRows, updatedRows } from '../plan/written-rows.js';
import {
  createdRowViolation,
  guardDelete,
  guardInsert,
  guardUpdate,
  guardUpsert,
  updatedRowViolation,
  upsertedRowViolation,
} from '../policy/stage.js';
import { type Access, readView, viewerFor, writeView } from '../policy/views.js';
import { type AppliedPreferences, NO_PREFERENCES, type Preferences } from '../query/prefer.js';
import { compileSelect } from '../sql/compile-read.js';
import {
  type CompiledGuard,
  type CompiledReadBack,
  compileDelete,
  compileInsertBatches,
  compileInsertGuard,
  compileInsertReadBack,
  compileInsertReturning,
  compileUpdate,
  compileUpdateGuard,
  compileUpdateReadBack,
  compileUpsertGuards,
  compileUpsertReadBack,
  MAX_PLACEHOLDERS,
  type ReadBackMemo,
  upsertReadable,
} from '../sql/compile-write.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { bindUser } from '../sql/user-values.js';
import type { Field, RowSerializer } from '../types/rows.js';
import { learnShape, shapedInsert, shapeOf } from './insert-shapes.js';
import { Memo } from './memo.js';
import { fieldsOf, keptSelectText, readSerializer } from './read.js';

export type { WriteJob } from '../execute/write.js';

/** A write job and what the answer needs beside its result. */
export interface PlannedWrite {
  readonly job: WriteJob;
  /**
   * `Prefer: return=representation` honoured: the serializer of the rows the job reads back,
   * or `none` when the caller may read no row of the table (its rows are then `[]`); null
   * when not asked for or not honoured.
   */
  readonly representation: RowSerializer | 'none' | null;
  /** What each row read back holds (types/rows.ts), for a front door that writes rows its own way. */
  readonly fields?: readonly Field[];
  readonly applied: AppliedPreferences;
}

const NOTHING_APPLIED: AppliedPreferences = {
  representation: false,
  resolution: false,
  maxAffected: false,
};
const REPRESENTATION_APPLIED: AppliedPreferences = { ...NOTHING_APPLIED, representation: true };

/**
 * `POST /table/<t>/create`. The body is planned against the role's write view (only columns it
 * may name: a hidden one is unknown, policy/views.ts). `Prefer: resolution=…` makes it an
 * upsert.
 */
export function createJob(
  table: TableInfo,
  body: unknown,
  access: Access | null,
  preferences: Preferences = NO_PREFERENCES,
  flavour: Flavour = 'mariadb',
): PlannedWrite {
  // One row, no policy, no preferences: its body's shape may be known (insert-shapes.ts).
  const row = access === null && preferences === NO_PREFERENCES && isObject(body) ? body : null;
  const shape = row === null ? undefined : shapeOf(table, row);
  if (shape !== undefined && row !== null) {
    const { statement, exact } = shapedInsert(shape, row);
    const parts = { statements: [statement], guards: [], readBack: null, unprepare: false };
    return {
      job: insertJob(exact, parts, null, table),
      representation: null,
      applied: NOTHING_APPLIED,
    };
  }
  const made = planInsert(writeView(access, table, 'create'), body, preferences.resolution);
  if (made.onDuplicate !== undefined) return upsertJob(made, access, preferences, flavour);
  const plan = guardInsert(access, made);
  // A policy's where beyond `col eq value`: checked after the INSERT, in its transaction.
  const guard = compileInsertGuard(plan);
  const statements = compileInsertBatches(plan).map((query) => bound(query, access));
  if (row !== null) learnShape(table, row, plan.columns, (statements[0] as CompiledQuery).sql);
  const rows = preferences.representation ? insertedRows(plan) : null;
  const read = rows === null ? null : readBackPlan(plan.table, access);
  const readBack =
    rows === null || read === null
      ? null
      : compileInsertReadBack(plan, rows, read.plan, flavour, MAX_PLACEHOLDERS, read.kept);
  const unprepare = plan.rows.length > 1;
  const guards =
    guard === null ? [] : [writeGuard(guard, access, () => createdRowViolation(plan.table))];
  const exact = statements.length === 1 && guards.length === 0 && insertIsExact(plan);
  // One exact row on MariaDB: the row comes back with the INSERT itself (one statement alone).
  const returning =
    exact && read !== null && flavour === 'mariadb'
      ? compileInsertReturning(plan, read.plan)
      : null;
  const job: WriteJob = returning
    ? {
        mode: 'alone',
        statement: bound(returning.statement, access),
        unprepare,
        returning: returning.returning,
      }
    : insertJob(
        exact && readBack === null,
        { statements, guards, readBack, unprepare },
        access,
        table,
      );
  return {
    job,
    representation: rows === null ? null : (read?.serialize ?? 'none'),
    ...(rows === null || read === null ? {} : { fields: read.fields }),
    applied: rows === null ? NOTHING_APPLIED : REPRESENTATION_APPLIED,
  };
}

/**
 * An insert's job: its one statement under autocommit when `alone` (exact, nothing to check or
 * read back), else a transaction with the guards and the read-back.
 */
function insertJob(
  alone: boolean,
  parts: {
    statements: CompiledQuery[];
    guards: WriteGuard[];
    readBack: CompiledReadBack | null;
    unprepare: boolean;
  },
  access: Access | null,
  table: TableInfo,
): WriteJob {
  const { statements, guards, readBack, unprepare } = parts;
  if (alone) {
    return { mode: 'alone', statement: statements[0] as CompiledQuery, unprepare, returning: null };
  }
  return {
    mode: 'transaction',
    statements,
    unprepare,
    guards,
    maxAffected: null,
    readBack: readBack && boundReadBack(readBack, access),
    generated: generatedColumns(table),
  };
}

/** An upsert (docs/writes.md): each row its own statement where a policy checks it or it is read back. */
function upsertJob(
  made: InsertPlan,
  access: Access | null,
  preferences: Preferences,
  flavour: Flavour,
): PlannedWrite {
  const guarded = guardUpsert(access, made);
  const readable = preferences.representation && upsertReadable(guarded);
  const onDuplicate = guarded.onDuplicate as NonNullable<InsertPlan['onDuplicate']>;
  const plan =
    readable && !onDuplicate.perRow
      ? { ...guarded, onDuplicate: { ...onDuplicate, perRow: true } }
      : guarded;
  const statements = compileInsertBatches(plan).map((query) => bound(query, access));
  const guards = compileUpsertGuards(plan).map((guard) =>
    writeGuard(guard, access, () => upsertedRowViolation(plan.table, onDuplicate.resolution)),
  );
  const read = readable ? readBackPlan(plan.table, access) : null;
  const readBack =
    read === null
      ? null
      : compileUpsertReadBack(plan, read.plan, flavour, MAX_PLACEHOLDERS, read.kept);
  const unprepare = plan.rows.length > 1;
  const alone =
    statements.length === 1 && guards.length === 0 && readBack === null && insertIsExact(plan);
  const job = insertJob(alone, { statements, guards, readBack, unprepare }, access, plan.table);
  return {
    job,
    representation: readable ? (read?.serialize ?? 'none') : null,
    ...(readable && read !== null ? { fields: read.fields } : {}),
    applied: { ...NOTHING_APPLIED, representation: readable, resolution: true },
  };
}

/** `PUT /table/<t>/update(<key>,<value>)` or `update?$filter=…`. */
export function updateJob(
  table: TableInfo,
  target: WriteTarget,
  body: unknown,
  access: Access | null,
  preferences: Preferences = NO_PREFERENCES,
  flavour: Flavour = 'mariadb',
): PlannedWrite {
  const planned = planUpdate(
    writeView(access, table, 'update'),
    target,
    body,
    readView(access, table),
  );
  const plan = guardUpdate(access, planned);
  // A policy's where on a column the update changes: checked after it, in its transaction.
  const guard = compileUpdateGuard(plan);
  const statement = bound(compileUpdate(plan), access);
  const rows = preferences.representation ? updatedRows(plan) : null;
  const read = rows === null ? null : readBackPlan(plan.table, access);
  const readBack =
    rows === null || read === null
      ? null
      : compileUpdateReadBack(plan, rows, read.plan, flavour, MAX_PLACEHOLDERS, read.kept);
  const { maxAffected } = preferences;
  const guards =
    guard === null ? [] : [writeGuard(guard, access, () => updatedRowViolation(plan.table))];
  const job: WriteJob =
    guards.length === 0 && readBack === null && maxAffected === null && updateIsExact(plan)
      ? { mode: 'alone', statement, unprepare: false, returning: null }
      : {
          mode: 'transaction',
          statements: [statement],
          unprepare: false,
          guards,
          maxAffected,
          readBack: readBack && boundReadBack(readBack, access),
          generated: generatedColumns(table),
        };
  return {
    job,
    representation: rows === null ? null : (read?.serialize ?? 'none'),
    ...(rows === null || read === null ? {} : { fields: read.fields }),
    applied: {
      ...NOTHING_APPLIED,
      representation: rows !== null,
      maxAffected: maxAffected !== null,
    },
  };
}

/** `DELETE /table/<t>/delete(<key>,<value>)` or `delete?$filter=…`. */
export function deleteJob(
  table: TableInfo,
  target: WriteTarget,
  access: Access | null,
  preferences: Preferences = NO_PREFERENCES,
): PlannedWrite {
  const plan = guardDelete(access, planDelete(readView(access, table), target));
  const statement = bound(compileDelete(plan), access);
  const { maxAffected } = preferences;
  const job: WriteJob =
    maxAffected === null && deleteIsExact(plan)
      ? { mode: 'alone', statement, unprepare: false, returning: null }
      : {
          mode: 'transaction',
          statements: [statement],
          unprepare: false,
          guards: [],
          maxAffected,
          readBack: null,
          generated: [],
        };
  return {
    job,
    representation: null,
    applied: { ...NOTHING_APPLIED, maxAffected: maxAffected !== null },
  };
}

/**
 * The write under If-Match (pipeline/precondition.ts): always a transaction, since the check
 * runs in it first; a job that would have run alone is the same statement in one.
 */
export function conditionalJob(
  planned: PlannedWrite,
  table: TableInfo,
  precondition: WritePrecondition,
): PlannedWrite {
  const { job } = planned;
  const inTransaction: WriteJob =
    job.mode === 'transaction'
      ? { ...job, precondition }
      : { ...asTransaction(job, generatedColumns(table)), precondition };
  return { ...planned, job: inTransaction };
}

/** The table's generated columns, by name, once per table object (no allocation per write). */
const generatedByTable = new Memo<TableInfo, readonly string[]>((table) =>
  table.columns.filter((column) => column.generated).map((column) => column.name),
);
function generatedColumns(table: TableInfo): readonly string[] {
  return generatedByTable.of(table);
}

function bound(query: CompiledQuery, access: Access | null): CompiledQuery {
  return bindUser(query, access?.user ?? null);
}

/** A guard whose lookup and checks carry the caller's `@user` values, and its refusal. */
function writeGuard(
  guard: CompiledGuard,
  access: Access | null,
  error: WriteGuard['error'],
): WriteGuard {
  return {
    lookup: guard.lookup === null ? null : bound(guard.lookup, access),
    queries: (outcome) => guard.queries(outcome)?.map((query) => bound(query, access)) ?? null,
    error,
  };
}

function boundReadBack(readBack: CompiledReadBack, access: Access | null): CompiledReadBack {
  return {
    lookup: readBack.lookup === null ? null : bound(readBack.lookup, access),
    queries: (outcome) => readBack.queries(outcome).map((query) => bound(query, access)),
  };
}

/** The caller's read of a table's written rows, and its serializer; null when it may read none. */
interface ReadBackPlan {
  readonly plan: ReadPlan;
  readonly serialize: RowSerializer;
  readonly fields: readonly Field[];
  readonly kept: ReadBackMemo;
}

/**
 * The caller's read of `table` (the base table) as `$select=*` would plan it — its readable
 * columns, its row condition — ordered by primary key: what a read would show of the written
 * rows. Made once per table object and the caller's views (a where's `@user` values are bound
 * per request).
 */
function readBackPlan(table: TableInfo, access: Access | null): ReadBackPlan | null {
  return readBackPlans.of(viewerFor(access)).of(table);
}

const readBackPlans = new Memo<Viewer, Memo<TableInfo, ReadBackPlan | null>>(
  (viewer) => new Memo((table) => readBackPlanMade(table, viewer)),
);

function readBackPlanMade(table: TableInfo, viewer: Viewer): ReadBackPlan | null {
  if (viewer(table) === null) return null;
  const plan = planRead(ALL_ROWS, table, viewer);
  const orderBy = table.primaryKey.map((name) => ({
    expr: {
      kind: 'column' as const,
      source: plan.source,
      column: table.columnsByName.get(name) as ColumnInfo,
    },
    direction: 'asc' as const,
  }));
  const ordered = { ...plan, orderBy };
  const params = (flavour: Flavour) => compileSelect(ordered, flavour).params.length;
  return {
    plan: ordered,
    serialize: readSerializer(ordered),
    fields: fieldsOf(ordered.selections),
    kept: { params: { mariadb: params('mariadb'), mysql: params('mysql') }, text: keptSelectText },
  };
}

const ALL_ROWS = {
  select: '*',
  filter: null,
  orderBy: [],
  top: null,
  skip: null,
  count: false,
} as const;
