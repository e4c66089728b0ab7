/**
 * Write plans → `{ sql, params }` for INSERT (and `INSERT … ON DUPLICATE KEY UPDATE` for an
 * upsert), UPDATE and DELETE, and for what runs beside them in their transaction: a policy's
 * checks of the written rows and the read-back of `Prefer: return=representation`, both finding
 * the rows by primary key (plan/written-rows.ts). Names enter the text only through quoteIdent
 * (and only names the plan resolved against the schema); every value is a `?` parameter; a
 * column an inserted row leaves out is the SQL keyword DEFAULT. Knows no HTTP.
 */

import type { ServerKind } from '../db/pool.js';
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import type { PlannedFilter, ReadPlan } from '../plan/read-plan.js';
import { type GivenKey, givenKeys, makesId, uniqueKeysOf } from '../plan/unique-keys.js';
import type {
  DeletePlan,
  InsertedRows,
  InsertPlan,
  KeyMatch,
  PlannedCell,
  RowMatch,
  UpdatedRows,
  UpdatePlan,
} from '../plan/write-plan.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import {
  compileFilter,
  compileSelect,
  compileValue,
  type PlainSelectText,
  plainSelectList,
} from './compile-read.js';
import type { CompiledQuery } from './compiled-query.js';
import { quoteIdent } from './quote.js';

/** The most `?` a prepared statement may have (the protocol counts them in 16 bits). */
export const MAX_PLACEHOLDERS = 65_535;

/** One multi-row INSERT of every row of the plan. */
export function compileInsert(plan: InsertPlan): CompiledQuery {
  return insertStatement(plan, plan.rows);
}

/**
 * The plan's rows as as few INSERTs as the placeholder limit allows, in row order: one statement
 * unless rows × columns exceeds `maxPlaceholders`. Run them in one transaction. An upsert that
 * merges starts a new statement wherever the columns a row gives change (its UPDATE sets
 * exactly those), and one whose rows are checked or read back makes one statement per row.
 */
export function compileInsertBatches(
  plan: InsertPlan,
  maxPlaceholders = MAX_PLACEHOLDERS,
): CompiledQuery[] {
  if (plan.onDuplicate?.perRow) return plan.rows.map((row) => insertStatement(plan, [row]));
  const merge = plan.onDuplicate?.resolution === 'merge-duplicates';
  const statements: CompiledQuery[] = [];
  let batch: (readonly PlannedCell[])[] = [];
  let placeholders = 0;
  for (const row of plan.rows) {
    const count = row.filter((cell) => cell.kind === 'value').length;
    const full = batch.length > 0 && placeholders + count > maxPlaceholders;
    if (full || (merge && batch.length > 0 && !sameColumns(batch[0] as PlannedCell[], row))) {
      statements.push(insertStatement(plan, batch));
      batch = [];
      placeholders = 0;
    }
    batch.push(row);
    placeholders += count;
  }
  if (batch.length > 0) statements.push(insertStatement(plan, batch));
  return statements;
}

const sameColumns = (a: readonly PlannedCell[], b: readonly PlannedCell[]) =>
  a.every((cell, at) => cell.kind === b[at]?.kind);

function insertStatement(
  plan: InsertPlan,
  rows: readonly (readonly PlannedCell[])[],
): CompiledQuery {
  const params: unknown[] = [];
  const columns = plan.columns.map((column) => quoteIdent(column.name)).join(', ');
  const tuples = rows.map((row) => {
    const cells = row.map((cell) => {
      if (cell.kind === 'default') return 'DEFAULT';
      params.push(cell.value);
      return '?';
    });
    return `(${cells.join(', ')})`;
  });
  const sql = `INSERT INTO ${quoteIdent(plan.table.name)} (${columns}) VALUES ${tuples.join(', ')}`;
  return { sql: plan.onDuplicate ? sql + onDuplicateClause(plan, rows[0] ?? []) : sql, params };
}

/**
 * `ON DUPLICATE KEY UPDATE`: for a merge, each column the rows give (they all give the same:
 * compileInsertBatches) but the primary key's, to the new row's value — `VALUES(col)`, which
 * MariaDB has and MySQL still takes (8.0.20+ with a deprecation note, not a data warning); for
 * `ignore-duplicates`, or a merge that gives nothing else, an assignment of a column to itself,
 * which leaves the row as it is and, unlike INSERT IGNORE, lets every other error fail the
 * statement.
 */
function onDuplicateClause(plan: InsertPlan, row: readonly PlannedCell[]): string {
  const { table } = plan;
  const set =
    plan.onDuplicate?.resolution === 'merge-duplicates'
      ? plan.columns.filter(
          (column, at) => row[at]?.kind === 'value' && !table.primaryKey.includes(column.name),
        )
      : [];
  if (set.length > 0) {
    const assignments = set.map((column) => {
      const name = quoteIdent(column.name);
      return `${name} = VALUES(${name})`;
    });
    return ` ON DUPLICATE KEY UPDATE ${assignments.join(', ')}`;
  }
  const [first] = uniqueKeysOf(table)[0] ?? table.columns;
  const name = quoteIdent((first as ColumnInfo).name);
  return ` ON DUPLICATE KEY UPDATE ${name} = ${name}`;
}

/** `UPDATE … SET … WHERE <rows>`: with the pool's CLIENT_FOUND_ROWS, affectedRows counts matched rows. */
export function compileUpdate(plan: UpdatePlan): CompiledQuery {
  const params: unknown[] = [];
  const set = plan.set.map(({ column, value }) => {
    params.push(value);
    return `${quoteIdent(column.name)} = ?`;
  });
  const where = compileWhere(plan.where, plan.condition, params);
  return {
    sql: `UPDATE ${quoteIdent(plan.table.name)} SET ${set.join(', ')} WHERE ${where}`,
    params,
  };
}

export function compileDelete(plan: DeletePlan): CompiledQuery {
  const params: unknown[] = [];
  const where = compileWhere(plan.where, plan.condition, params);
  return { sql: `DELETE FROM ${quoteIdent(plan.table.name)} WHERE ${where}`, params };
}

/**
 * The key or `$filter`, and a policy's row condition when there is one (both parenthesised by
 * compileFilter wherever they hold AND or OR, so the condition is never ORed away).
 */
function compileWhere(
  match: RowMatch,
  condition: PlannedFilter | null | undefined,
  params: unknown[],
): string {
  const rows =
    match.kind === 'filter' ? compileFilter(match.filter, params) : compileKeyMatch(match, params);
  return condition ? `${rows} AND ${compileFilter(condition, params)}` : rows;
}

/** How a column of the written table is named in a condition: bare, or as a read qualifies it. */
export type ColumnText = (column: ColumnInfo) => string;

const bare: ColumnText = (column) => quoteIdent(column.name);

/** A number goes through the read compiler's compileValue, which keeps it exact (see there). */
export function compileKeyMatch(
  match: KeyMatch,
  params: unknown[],
  columnText: ColumnText = bare,
): string {
  const column = columnText(match.column);
  if (match.kind === 'isNull') return `${column} IS NULL`;
  const { value } = match;
  if (value.kind === 'number') {
    return `${column} = ${compileValue({ kind: 'number', text: value.text }, params)}`;
  }
  params.push(value.value);
  return `${column} = ?`;
}

// ---- The written rows: checks and read-back -------------------------------------------------

/** What one statement of a write answered. */
export interface StatementResult {
  /** Rows inserted; for an UPDATE (the pool sets CLIENT_FOUND_ROWS) the rows it matched. */
  readonly affectedRows: number;
  /** The first AUTO_INCREMENT id it made: a number, its digits beyond 2^53, or null. */
  readonly insertId: number | string | null;
}

/** What a check after a write is made from, once the write's statements ran. */
export interface WriteOutcome {
  /** The rows of the check's lookup, as arrays in select order; none without a lookup. */
  readonly found: readonly (readonly unknown[])[];
  /** Each statement's answer, in order. */
  readonly results: readonly StatementResult[];
}

/**
 * A policy's check after a write (`plan.recheck`, plan/written-rows.ts), run in the write's
 * transaction: `lookup` before the statements, then the SELECTs `queries` makes of what the
 * lookup and the statements answered. Each SELECT returns a row exactly when a written row does
 * not satisfy `plan.condition` or is not found where it must be; `queries` gives null when the
 * statements did not write the rows expected. Either way the write is rolled back and refused.
 */
export interface CompiledGuard {
  readonly lookup: CompiledQuery | null;
  readonly queries: (outcome: WriteOutcome) => readonly CompiledQuery[] | null;
}

/**
 * The written rows read back in the write's transaction (`Prefer: return=representation`):
 * `lookup` before the statements, then the SELECTs of the caller's read of them.
 */
export interface CompiledReadBack {
  readonly lookup: CompiledQuery | null;
  readonly queries: (outcome: WriteOutcome) => readonly CompiledQuery[];
}

/** Some of the written rows: a condition on their table's columns and how many rows it finds. */
interface RowChunk {
  readonly where: (column: ColumnText, params: unknown[]) => string;
  readonly count: number;
}

/** Where a write's rows are: read before it (`lookup`), found after it in chunks. */
interface WrittenRows {
  readonly lookup: CompiledQuery | null;
  /**
   * The rows, in chunks of at most `room` placeholders each; null when the statements did not
   * write the rows expected.
   */
  chunks(outcome: WriteOutcome, room: number): readonly RowChunk[] | null;
}

/**
 * The rows of an INSERT: by the primary key values they give, or by the AUTO_INCREMENT ids each
 * statement made (its first id and row count, stepping by the session's
 * auto_increment_increment). `point`: a statement of one row is found by `id = ?`.
 */
function insertedAt(plan: InsertPlan, rows: InsertedRows, point: boolean): WrittenRows {
  if (rows.kind === 'auto-increment') {
    return {
      lookup: null,
      chunks: ({ results }) => {
        let inserted = 0;
        const chunks: RowChunk[] = [];
        for (const { insertId, affectedRows } of results) {
          if (insertId === null) return null;
          inserted += affectedRows;
          chunks.push(idRange(rows.column, insertId, affectedRows, point));
        }
        return inserted === plan.rows.length ? chunks : null;
      },
    };
  }
  const at = rows.key.map((key) => plan.columns.findIndex(({ name }) => name === key.name));
  const keys = plan.rows.map((row) =>
    at.map((index) => {
      const cell = row[index];
      return cell?.kind === 'value' ? cell.value : undefined;
    }),
  );
  return { lookup: null, chunks: (_outcome, room) => keyChunks(rows.key, keys, room) };
}

/** first, first + step, …, first + (n - 1) × step: a range on the key, then the step. */
function idRange(
  column: ColumnInfo,
  insertId: number | string,
  count: number,
  point: boolean,
): RowChunk {
  return {
    count,
    where: (columnText, params) => {
      const name = columnText(column);
      const first = () => compileValue({ kind: 'number', text: String(insertId) }, params);
      if (point && count === 1) return `${name} = ${first()}`;
      const range = `${name} BETWEEN ${first()} AND ${first()} + CAST(? AS UNSIGNED) * @@auto_increment_increment`;
      params.push(String(count - 1));
      return `${range} AND MOD(${name}, @@auto_increment_increment) = MOD(${first()}, @@auto_increment_increment)`;
    },
  };
}

/**
 * The rows of an UPDATE. By its key when that is the primary key (`update(id,6)`): the row at
 * that key, when the UPDATE matched one. Otherwise by the primary keys a SELECT … FOR UPDATE
 * with the UPDATE's own WHERE read just before it: locked, those rows are the ones it matches,
 * which its matched-row count confirms (a row that came in between would show in it).
 */
function updatedAt(plan: UpdatePlan, rows: UpdatedRows): WrittenRows {
  const { where } = plan;
  if (rows.kind === 'key') {
    // plan/written-rows.ts finds rows by key only for update(<primary key>,<value>).
    if (where.kind === 'filter') throw new Error('rows by key for an update by $filter');
    return {
      lookup: null,
      chunks: ({ results }) => {
        const matched = results[0]?.affectedRows ?? 0;
        if (matched === 0) return [];
        return [
          { count: matched, where: (column, params) => compileKeyMatch(where, params, column) },
        ];
      },
    };
  }
  const { key } = rows;
  const params: unknown[] = [];
  const sql = compileWhere(where, plan.condition, params);
  const columns = key.map((column) => quoteIdent(column.name)).join(', ');
  return {
    lookup: {
      sql: `SELECT ${columns} FROM ${quoteIdent(plan.table.name)} WHERE ${sql} FOR UPDATE`,
      params,
    },
    chunks: ({ found, results }, room) =>
      (results[0]?.affectedRows ?? 0) === found.length ? keyChunks(key, found, room) : null,
  };
}

/** Rows by their primary key values: `pk IN (…)`, or `(a = ? AND b = ?) OR …` for a compound one. */
function keyChunks(
  key: readonly ColumnInfo[],
  rows: readonly (readonly unknown[])[],
  room: number,
): RowChunk[] {
  const perChunk = Math.max(1, Math.floor(room / key.length));
  const chunks: RowChunk[] = [];
  for (let start = 0; start < rows.length; start += perChunk) {
    const chunk = rows.slice(start, start + perChunk);
    chunks.push({
      count: chunk.length,
      where: (columnText, params) => {
        if (key.length === 1) {
          const column = key[0] as ColumnInfo;
          const values = chunk.map((values) => keyValue(column, values[0], params));
          return `${columnText(column)} IN (${values.join(', ')})`;
        }
        const each = chunk.map(
          (values) =>
            `(${key.map((column, k) => `${columnText(column)} = ${keyValue(column, values[k], params)}`).join(' AND ')})`,
        );
        return `(${each.join(' OR ')})`;
      },
    });
  }
  return chunks;
}

/**
 * A key value as a placeholder: a number exactly, as reads compare numbers (compileValue: a
 * string parameter would be compared as a double, wrong beyond 2^53); anything else as it was
 * written or read (text, a date as text, bytes).
 */
function keyValue(column: ColumnInfo, value: unknown, params: unknown[]): string {
  if (
    COLUMN_KINDS[column.kind].keyAsNumber &&
    (typeof value === 'number' || typeof value === 'string')
  ) {
    return compileValue({ kind: 'number', text: String(value) }, params);
  }
  params.push(value ?? null);
  return '?';
}

/**
 * What each row of an `INSERT … RETURNING` (compileInsertReturning) holds:
 * the caller's read of the row in its first `width` values, then, at `visibleAt`, whether the
 * caller may read the row at all (its read where), and at `insertIdAt` the AUTO_INCREMENT
 * column, the statement's insert id.
 */
export interface ReturnedRows {
  readonly width: number;
  readonly visibleAt: number | null;
  readonly insertIdAt: number | null;
}

/** A row condition compiled once, its text and parameters reused by every SELECT of a check. */
interface Condition {
  readonly sql: string;
  readonly params: readonly unknown[];
}

function conditionOf(condition: PlannedFilter): Condition {
  const params: unknown[] = [];
  return { sql: compileFilter(condition, params), params };
}

/**
 * `SELECT COUNT(*) … WHERE <rows> HAVING …`: one row back (the aggregate's only group) exactly
 * when the rows found are not `count` or one of them does not satisfy the condition.
 */
function checkQuery(table: TableInfo, chunk: RowChunk, condition: Condition): CompiledQuery {
  const params: unknown[] = [];
  const rows = chunk.where(bare, params);
  return {
    sql: `SELECT COUNT(*) FROM ${quoteIdent(table.name)} WHERE ${rows} HAVING COUNT(*) <> ? OR SUM((${condition.sql}) IS NOT TRUE) > 0`,
    params: [...params, chunk.count, ...condition.params],
  };
}

/** The checks of `rows` against `condition`, as few SELECTs as the placeholder limit allows. */
function checksOf(
  table: TableInfo,
  rows: WrittenRows,
  condition: PlannedFilter,
  maxPlaceholders: number,
): CompiledGuard {
  const check = conditionOf(condition);
  const room = maxPlaceholders - 1 - check.params.length;
  return {
    lookup: rows.lookup,
    queries: (outcome) =>
      rows.chunks(outcome, room)?.map((chunk) => checkQuery(table, chunk, check)) ?? null,
  };
}

/**
 * The check of an INSERT (`plan.recheck`): its rows found by the primary key values they give,
 * or by the AUTO_INCREMENT ids each statement made. Null when there is nothing to check.
 */
export function compileInsertGuard(
  plan: InsertPlan,
  maxPlaceholders = MAX_PLACEHOLDERS,
): CompiledGuard | null {
  const { recheck, condition } = plan;
  if (!recheck || !condition) return null;
  return checksOf(plan.table, insertedAt(plan, recheck, false), condition, maxPlaceholders);
}

/**
 * The check of an UPDATE (`plan.recheck`): the row at its primary key, or the rows it matched,
 * locked just before it. Null when there is nothing to check.
 */
export function compileUpdateGuard(
  plan: UpdatePlan,
  maxPlaceholders = MAX_PLACEHOLDERS,
): CompiledGuard | null {
  const { recheck, condition } = plan;
  if (!recheck || !condition) return null;
  return checksOf(plan.table, updatedAt(plan, recheck), condition, maxPlaceholders);
}

/**
 * The checks of an upsert whose policy asks for them (`plan.onDuplicate.checks`), one per row
 * and so per statement (the plan makes one INSERT per row). Before the statements, each row's
 * lookup locks the rows its primary and unique keys meet (plan/unique-keys.ts), with whether
 * each satisfies `before`: a row outside it means the upsert would change a row the role may
 * not update, and nothing is written. After them, what the row's statement did must be what the
 * lookup foresaw — a row met is updated (MySQL counts 1 or 2) or left, none met is inserted
 * (counts 1) — and the rows written must satisfy `after`: those met, found by the primary keys
 * the lookup read, or the new one, by the primary key it gives or the id MySQL made. A row the
 * lookup did not foresee (two rows of the body with one key, say) refuses the whole write.
 */
export function compileUpsertGuards(
  plan: InsertPlan,
  maxPlaceholders = MAX_PLACEHOLDERS,
): CompiledGuard[] {
  const checks = plan.onDuplicate?.checks;
  if (!checks) return [];
  const { table } = plan;
  const { key, before, after } = checks;
  const merge = plan.onDuplicate?.resolution === 'merge-duplicates';
  const keys = uniqueKeysOf(table);
  const check = after === null ? null : conditionOf(after);
  const room = maxPlaceholders - 1 - (check?.params.length ?? 0);
  const keyAt = key.map((column) => plan.columns.indexOf(column));
  return plan.rows.map((row, index): CompiledGuard => {
    const given = givenKeys(keys, plan.columns, row).keys;
    // The primary key the row gives; null for an id MySQL makes.
    const own = keyAt.map((at, k) => {
      const cell = at === -1 ? undefined : row[at];
      if (cell?.kind !== 'value') return null;
      return (key[k] as ColumnInfo).autoIncrement && makesId(cell.value) ? null : cell.value;
    });
    const lookup = given.length === 0 ? null : meetsLookup(table, key, given, before);
    return {
      lookup,
      queries: ({ found, results }) => {
        const result = results[index];
        if (result === undefined) return null;
        if (before !== null && found.some((met) => Number(met[key.length]) !== 1)) return null;
        if (found.length > 0) {
          if (!merge || check === null) return [];
          const pks = found.map((met) => met.slice(0, key.length));
          return keyChunks(key, pks, room).map((chunk) => checkQuery(table, chunk, check));
        }
        if (result.affectedRows !== 1) return null;
        if (check === null) return [];
        const [first] = key;
        const chunk = own.every((value) => value !== null)
          ? keyChunks(key, [own], room)[0]
          : key.length === 1 && first?.autoIncrement && result.insertId !== null
            ? idRange(first, result.insertId, 1, true)
            : undefined;
        return chunk === undefined ? null : [checkQuery(table, chunk, check)];
      },
    };
  });
}

/**
 * `SELECT <primary key>[, (<before>) IS TRUE] … WHERE <a key the row gives> OR … FOR UPDATE`:
 * the rows a new row meets, locked (in REPEATABLE READ the gap too, so none can come in between).
 */
function meetsLookup(
  table: TableInfo,
  key: readonly ColumnInfo[],
  given: readonly GivenKey[],
  before: PlannedFilter | null,
): CompiledQuery {
  const params: unknown[] = [];
  const list = key.map((column) => quoteIdent(column.name));
  if (before !== null) list.push(`(${compileFilter(before, params)}) IS TRUE`);
  const select = list.join(', ');
  const where = given.map((one) => givenKeyMatch(one, bare, params)).join(' OR ');
  return {
    sql: `SELECT ${select} FROM ${quoteIdent(table.name)} WHERE ${where} FOR UPDATE`,
    params,
  };
}

/** `(a = ? AND b = ?)`: the row holding one key's values. */
function givenKeyMatch(given: GivenKey, columnText: ColumnText, params: unknown[]): string {
  const parts = given.columns.map(
    (column, k) => `${columnText(column)} = ${keyValue(column, given.values[k], params)}`,
  );
  return `(${parts.join(' AND ')})`;
}

// ---- Read-back -------------------------------------------------------------------------------

/**
 * One INSERT that answers the caller's read of the rows it wrote (MariaDB 10.5+ `INSERT …
 * RETURNING`): the read's columns, then whether each row satisfies the read's row condition
 * (when it has one), then the AUTO_INCREMENT column (when the table has one: the result set has
 * no OK packet to carry the insert id). The same values a read-back by primary key in the
 * transaction would find, in one statement instead of BEGIN, INSERT, SELECT and COMMIT: what
 * the pipeline runs alone for a create of one exact row. Null for a read of anything but the
 * table's own columns.
 */
export function compileInsertReturning(
  plan: InsertPlan,
  read: ReadPlan,
): { readonly statement: CompiledQuery; readonly returning: ReturnedRows } | null {
  const columns = read.selections.flatMap((s) => (s.kind === 'column' ? [s.expr.column] : []));
  if (columns.length === 0 || columns.length !== read.selections.length) return null;
  const insert = insertStatement(plan, plan.rows);
  const params = [...insert.params];
  const list = columns.map((column) => quoteIdent(column.name));
  let visibleAt: number | null = null;
  if (read.filter !== null) {
    visibleAt = list.length;
    list.push(`(${compileFilter(read.filter, params)}) IS TRUE`);
  }
  const id = plan.table.columns.find((column) => column.autoIncrement);
  const insertIdAt = id === undefined ? null : list.length;
  if (id !== undefined) list.push(quoteIdent(id.name));
  return {
    statement: { sql: `${insert.sql} RETURNING ${list.join(', ')}`, params },
    returning: { width: columns.length, visibleAt, insertIdAt },
  };
}

/**
 * The read `read` (the caller's read of the table: its readable columns, its row condition,
 * ordered by primary key; pipeline/write.ts) of the written rows, as few SELECTs as the
 * placeholder limit allows.
 */
function readBackOf(
  read: ReadPlan,
  rows: WrittenRows,
  flavour: ServerKind['flavour'],
  maxPlaceholders: number,
  kept: ReadBackMemo | undefined,
): CompiledReadBack {
  const own = kept?.params[flavour] ?? compileSelect(read, flavour).params.length;
  const text = kept?.text ?? plainSelectList;
  const room = maxPlaceholders - own;
  return {
    lookup: rows.lookup,
    queries: (outcome) =>
      (rows.chunks(outcome, room) ?? []).map((chunk) =>
        compileSelect(read, flavour, chunk.where, text),
      ),
  };
}

/**
 * What a caller that reads back through the same read again keeps of it (pipeline/write.ts
 * keeps one per role and table): how many parameters its read has of its own, per flavour, and
 * its plain select list's text (compileSelect's PlainSelectText).
 */
export interface ReadBackMemo {
  readonly params: Readonly<Record<ServerKind['flavour'], number>>;
  readonly text: PlainSelectText;
}

/** The rows of an INSERT read back (found as its check finds them). */
export function compileInsertReadBack(
  plan: InsertPlan,
  rows: InsertedRows,
  read: ReadPlan,
  flavour: ServerKind['flavour'] = 'mariadb',
  maxPlaceholders = MAX_PLACEHOLDERS,
  kept?: ReadBackMemo,
): CompiledReadBack {
  return readBackOf(read, insertedAt(plan, rows, true), flavour, maxPlaceholders, kept);
}

/** The rows of an UPDATE read back (found as its check finds them). */
export function compileUpdateReadBack(
  plan: UpdatePlan,
  rows: UpdatedRows,
  read: ReadPlan,
  flavour: ServerKind['flavour'] = 'mariadb',
  maxPlaceholders = MAX_PLACEHOLDERS,
  kept?: ReadBackMemo,
): CompiledReadBack {
  return readBackOf(read, updatedAt(plan, rows), flavour, maxPlaceholders, kept);
}

/**
 * The rows of an upsert read back, one statement per row: each at the primary and unique keys it
 * gives (whether inserted, updated or left: a merge never moves a row's primary key), or, when
 * it gives none, at the id MySQL made for it (it can only have been inserted). A row that gives
 * neither is not found: the pipeline reads back only when every row does (upsertReadable).
 */
export function compileUpsertReadBack(
  plan: InsertPlan,
  read: ReadPlan,
  flavour: ServerKind['flavour'] = 'mariadb',
  maxPlaceholders = MAX_PLACEHOLDERS,
  kept?: ReadBackMemo,
): CompiledReadBack {
  const keys = uniqueKeysOf(plan.table);
  const [id] = plan.table.primaryKey.map((name) => plan.table.columnsByName.get(name));
  const given = plan.rows.map((row) => givenKeys(keys, plan.columns, row).keys);
  const rows: WrittenRows = {
    lookup: null,
    chunks: ({ results }, room) => {
      const terms: { size: number; where: RowChunk['where'] }[] = [];
      given.forEach((found, index) => {
        if (found.length > 0) {
          const size = found.reduce((sum, one) => sum + one.values.length, 0);
          terms.push({
            size,
            where: (column, params) =>
              found.map((one) => givenKeyMatch(one, column, params)).join(' OR '),
          });
          return;
        }
        const insertId = results[index]?.insertId ?? null;
        if (id?.autoIncrement && insertId !== null) {
          terms.push({ size: 1, where: idRange(id, insertId, 1, true).where });
        }
      });
      const chunks: RowChunk[] = [];
      let chunk: typeof terms = [];
      let used = 0;
      const close = () => {
        const parts = chunk;
        chunks.push({
          count: parts.length,
          where: (column, params) =>
            `(${parts.map((part) => `(${part.where(column, params)})`).join(' OR ')})`,
        });
      };
      for (const term of terms) {
        if (chunk.length > 0 && used + term.size > room) {
          close();
          chunk = [];
          used = 0;
        }
        chunk.push(term);
        used += term.size;
      }
      if (chunk.length > 0) close();
      return chunks;
    },
  };
  return readBackOf(read, rows, flavour, maxPlaceholders, kept);
}

/** Whether every row of an upsert can be read back (compileUpsertReadBack). */
export function upsertReadable(plan: InsertPlan): boolean {
  const keys = uniqueKeysOf(plan.table);
  const [id, ...more] = plan.table.primaryKey.map((name) => plan.table.columnsByName.get(name));
  const autoId = more.length === 0 && id?.autoIncrement === true;
  return plan.rows.every((row) => givenKeys(keys, plan.columns, row).keys.length > 0 || autoId);
}
