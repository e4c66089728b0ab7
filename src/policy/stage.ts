/**
 * The policy stage of a write, between plan and compile (docs/policies.md): given the caller's
 * Access and a write plan, returns the plan narrowed to what the role may do — the where ANDed
 * into the statement, a check after the write where the where reads what it changes — or throws
 * 403. Reads need no stage: they are planned through the role's views (policy/views.ts).
 * Without a policy (access null) plans pass unchanged.
 */
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import {
  forbidden,
  forbiddenColumns,
  policyViolation,
  unknownColumn,
  unknownTable,
} from '../errors.js';
import { both, type PlannedFilter } from '../plan/nodes.js';
import { uniqueKeysOf } from '../plan/unique-keys.js';
import type {
  DeletePlan,
  InsertPlan,
  RowMatch,
  UpdatePlan,
  WriteParam,
} from '../plan/write-plan.js';
import { insertedRows, primaryKeyOf, updatedRows } from '../plan/written-rows.js';
import type { Resolution } from '../query/prefer.js';
import { isCanonicalInteger } from '../sql/user-values.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import { coerceValue } from '../types/value-codec.js';
import type { Action, Grant } from './policy.js';
import { type Access, baseTable } from './views.js';
import type { RequiredValue, WhereCondition } from './where.js';

export type { Access } from './views.js';

function grantOf(access: Access, table: TableInfo, action: Action): Grant {
  const decision = access.policy.decide(access.role, { kind: 'table', table: table.name, action });
  if (decision.allowed) return decision.grant as Grant;
  // The policy gate (http/policy-gate.ts) refuses these before the handler runs; this answers
  // the same for any other caller of the stage.
  throw decision.refusal === 'unknown-table' ? unknownTable(table.name) : forbidden();
}

/**
 * A write planned against the role's view of the table (plan/view.ts), on the whole table: the
 * policy's where and the checks after the write read every column, and the statement's exactness
 * (plan/exact-write.ts) depends on the columns the body leaves out.
 */
function onBaseTable<T extends { readonly table: TableInfo }>(plan: T): T {
  const table = baseTable(plan.table);
  return table === plan.table ? plan : { ...plan, table };
}

/**
 * Every column the body names is one the action may write; the refusal names those it may not
 * (each one the role can read: a hidden column is unknown before this, policy/views.ts).
 */
function checkWritable(
  grant: Grant,
  columns: readonly ColumnInfo[],
  table: TableInfo,
  action: 'create' | 'update',
): void {
  if (grant.columns === null) return;
  const allowed = new Set(grant.columns);
  const refused = columns.filter((column) => !allowed.has(column.name));
  if (refused.length > 0) {
    throw forbiddenColumns(
      table.name,
      action,
      refused.map((column) => column.name),
    );
  }
}

/**
 * The key of update(…)/delete(…) may only name a column the role can read (a `$filter` was
 * planned through the role's read view already: plan/write-target.ts).
 */
function checkKey(access: Access, table: TableInfo, key: RowMatch): void {
  if (key.kind === 'filter') return;
  const { columns } = grantOf(access, table, 'read');
  if (columns && !columns.includes(key.column.name))
    throw unknownColumn(table.name, key.column.name);
}

function sameParam(a: WriteParam, b: WriteParam): boolean {
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b)) {
    return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
  }
  return a === b;
}

/**
 * Whether a value about to be written equals what a `col eq value` conjunct requires. Both go
 * through the same codec as the body, so equal parameters store equal values and the SQL `=`
 * holds; anything else (a value the codec refuses, a float) counts as not equal — the check can
 * refuse a row MySQL would accept, never accept one it would not. An `@user` value is exact, as
 * in SQL (sql/compile-filter.ts compareUser): text only when it is the very same text (the codec
 * passes text through as it is), an integer only from its canonical digits.
 */
function satisfies(column: ColumnInfo, value: WriteParam, required: readonly RequiredValue[]) {
  if (value === null || !COLUMN_KINDS[column.kind].policyEquals) return false;
  return required.every(({ literal, exact }) => {
    // equalities() gives a caller's value as a string literal.
    if (literal.kind === 'user') return false;
    const given = literal.kind === 'number' ? literal.text : literal.value;
    if (exact && !exactlyWritable(column, String(given))) return false;
    try {
      return sameParam(coerceValue(column, given), value);
    } catch {
      return false;
    }
  });
}

/** Whether an `@user` value can equal a value of the column at all (text, or canonical digits). */
function exactlyWritable(column: ColumnInfo, text: string): boolean {
  const equals = COLUMN_KINDS[column.kind].userEquals;
  return equals === 'integer' ? isCanonicalInteger(text) : equals === 'text';
}

function violation(table: TableInfo, action: 'create' | 'update', detail: string): never {
  throw policyViolation(
    `The ${action === 'create' ? 'new row' : 'updated row'} would not satisfy this role's policy for ${action} on '${table.name}': ${detail}`,
  );
}

/** The answer when the check after an update (compileUpdateGuard) found a row outside the where. */
export const updatedRowViolation = (table: TableInfo) =>
  policyViolation(
    `The updated row would not satisfy this role's policy for update on '${table.name}'; nothing was changed`,
  );

/** Why a write that needs a check after it is refused (plan/written-rows.ts). */
const CANNOT_FIND =
  'and the rows it writes cannot be found again by their primary key here (a view, a table without a primary key or with triggers, a change to the primary key, or a batch that gives some AUTO_INCREMENT ids and not others)';

/** The answer when the check after a create (compileInsertGuard) found a row outside the where. */
export const createdRowViolation = (table: TableInfo) =>
  policyViolation(
    `A new row would not satisfy this role's policy for create on '${table.name}'; nothing was inserted`,
  );

/**
 * A create: only granted columns, and every row satisfies the where; a batch with one bad row
 * writes none. The where's top-level `col eq value` conjuncts are checked here against the values
 * about to be written, before any SQL (a row that leaves such a column to its default does not
 * satisfy it: the default is not known here). When that is the whole where, nothing else is
 * needed; otherwise (`amount lt 100`, an `or`) the rows are checked after the INSERT in the same
 * transaction, found by their primary key (`recheck`, plan/written-rows.ts, compiled by
 * compileInsertGuard), and everything is rolled back when one fails.
 */
export function guardInsert(access: Access | null, made: InsertPlan): InsertPlan {
  if (access === null) return made;
  const plan = onBaseTable(made);
  const grant = grantOf(access, plan.table, 'create');
  checkWritable(grant, plan.columns, plan.table, 'create');
  if (grant.where === null) return plan;
  const { complete } = checkRequired(access, plan, grant.where, true);
  if (complete) return plan;
  const recheck = insertedRows(plan);
  if (recheck === null) {
    throw policyViolation(
      `This role's policy for create on '${plan.table.name}' is more than 'column eq value' conditions, ${CANNOT_FIND}`,
    );
  }
  return { ...plan, condition: grant.where.planOn(plan.table), recheck };
}

/**
 * The where's top-level `col eq value` conjuncts against the values about to be written, before
 * any SQL: a row whose value for such a column is another one violates it; one that leaves the
 * column out does too when `leftOut` says so (its default is not known here). Says whether the
 * conjuncts are the whole where.
 */
function checkRequired(
  access: Access,
  plan: InsertPlan,
  where: WhereCondition,
  leftOut: boolean,
): { readonly complete: boolean } {
  const { required, complete } = where.equalities(access.user);
  for (const [name, literals] of required) {
    const at = plan.columns.findIndex((column) => column.name === name);
    const column = plan.table.columnsByName.get(name) as ColumnInfo;
    plan.rows.forEach((row, index) => {
      const cell = at === -1 ? undefined : row[at];
      if (cell?.kind !== 'value' && !leftOut) return;
      const ok = cell?.kind === 'value' && satisfies(column, cell.value, literals);
      if (!ok) {
        const which = plan.rows.length > 1 ? `row ${index + 1}, ` : '';
        violation(plan.table, 'create', `${which}column '${name}'`);
      }
    });
  }
  return { complete };
}

/** The answer when an upsert's checks (compileUpsertGuards) found a row outside a where. */
export const upsertedRowViolation = (table: TableInfo, resolution: Resolution) =>
  policyViolation(
    resolution === 'merge-duplicates'
      ? `A row of the upsert would change a row this role may not update, or would not satisfy this role's policy for create or update on '${table.name}' (or two rows give the same key); nothing was written`
      : `A row of the upsert meets a row outside this role's policy for read on '${table.name}', or would not satisfy its policy for create (or two rows give the same key); nothing was written`,
  );

/**
 * An upsert (`Prefer: resolution=…`, docs/writes.md): a row may insert, so the create grant, its
 * columns and its where; under `merge-duplicates` it may update the row its key meets, so the
 * update grant too, its columns (but the primary key's, which only find the row) and its where.
 * Given values are held against the create where's `col eq value` conjuncts before any SQL; then,
 * where a where applies, everything else in the transaction (compileUpsertGuards): each row's
 * keys are looked up first, a row met must satisfy the update where — under `ignore-duplicates`,
 * which changes nothing it meets, the where of the caller's own rows (ownRows) — else it is
 * another tenant's row: 403, nothing written; and every row written must satisfy both wheres
 * after, found by primary key. Where rows cannot be found so, the upsert is refused.
 */
export function guardUpsert(access: Access | null, made: InsertPlan): InsertPlan {
  const { onDuplicate } = made;
  if (access === null || onDuplicate === undefined) return made;
  const plan = onBaseTable(made);
  const { table } = plan;
  const merge = onDuplicate.resolution === 'merge-duplicates';
  const create = grantOf(access, table, 'create');
  checkWritable(create, plan.columns, table, 'create');
  const update = merge ? grantOf(access, table, 'update') : null;
  if (update !== null) {
    checkWritable(
      update,
      plan.columns.filter((column) => !table.primaryKey.includes(column.name)),
      table,
      'update',
    );
  }
  const before = merge ? (update?.where?.planOn(table) ?? null) : ownRows(access, table);
  if (create.where === null && before === null) return plan;
  if (create.where !== null) checkRequired(access, plan, create.where, false);
  const after = both(create.where?.planOn(table) ?? null, merge ? before : null);
  // Only the rows written are found again by primary key: a lookup alone needs none.
  const key = primaryKeyOf(table) ?? (after === null ? [] : null);
  if (key === null) {
    throw policyViolation(
      `This role's policy for ${merge ? 'create and update' : 'create'} on '${table.name}' has a where, ${CANNOT_FIND}`,
    );
  }
  return { ...plan, onDuplicate: { ...onDuplicate, perRow: true, checks: { before, after, key } } };
}

/**
 * The rows an `ignore-duplicates` may meet and leave as they are: the caller's own, those its
 * read where admits (every write needs the read grant; a row it cannot read is another
 * tenant's). Null: any row — also for a table without a primary or unique key, where no row can
 * be met.
 */
function ownRows(access: Access, table: TableInfo): PlannedFilter | null {
  if (uniqueKeysOf(table).length === 0) return null;
  return grantOf(access, table, 'read').where?.planOn(table) ?? null;
}

/**
 * An update: only granted columns are set, the where is ANDed into the UPDATE's WHERE (a key
 * outside it matches nothing), and an updated row must still satisfy it. Columns the SET does
 * not touch keep their values, so only parts of the where that read a set column can turn false:
 * - a set column that is one of the where's top-level `col eq value` conjuncts is checked here,
 *   before any SQL: a value other than that one is 403 POLICY_VIOLATION at once;
 * - any other part that reads a set column (`amount lt 100`, an `or`, a generated column) is
 *   checked after the UPDATE in the same transaction on the rows it wrote, found by their
 *   primary key (`recheck`, plan/written-rows.ts, compiled by compileUpdateGuard): one that no
 *   longer satisfies the where rolls everything back with 403 POLICY_VIOLATION. Where the rows
 *   cannot be found so, the update is refused instead.
 */
export function guardUpdate(access: Access | null, made: UpdatePlan): UpdatePlan {
  if (access === null) return made;
  const plan = onBaseTable(made);
  const grant = grantOf(access, plan.table, 'update');
  checkWritable(
    grant,
    plan.set.map((assignment) => assignment.column),
    plan.table,
    'update',
  );
  checkKey(access, plan.table, plan.where);
  if (grant.where === null) return plan;
  const read = grant.where.template.columns;
  // A generated column the where reads may follow any set column.
  const readsGenerated = [...read].some((name) => plan.table.columnsByName.get(name)?.generated);
  const touched = plan.set.filter(({ column }) => read.has(column.name));
  let needsCheck = readsGenerated && plan.set.length > 0;
  if (touched.length > 0) {
    const { required, elsewhere } = grant.where.equalities(access.user);
    for (const { column, value } of touched) {
      const literals = required.get(column.name);
      if (literals !== undefined && !satisfies(column, value, literals)) {
        violation(plan.table, 'update', `column '${column.name}'`);
      }
      if (literals === undefined || elsewhere.has(column.name)) needsCheck = true;
    }
  }
  const condition = grant.where.planOn(plan.table);
  if (!needsCheck) return { ...plan, condition };
  const recheck = updatedRows(plan);
  if (recheck === null) {
    throw policyViolation(
      `This role's policy for update on '${plan.table.name}' reads a column this update changes, ${CANNOT_FIND}`,
    );
  }
  return { ...plan, condition, recheck };
}

/** A delete: the where is ANDed into the DELETE's WHERE. */
export function guardDelete(access: Access | null, made: DeletePlan): DeletePlan {
  if (access === null) return made;
  const plan = onBaseTable(made);
  const grant = grantOf(access, plan.table, 'delete');
  checkKey(access, plan.table, plan.where);
  if (grant.where === null) return plan;
  return { ...plan, condition: grant.where.planOn(plan.table) };
}
