/**
 * A deep insert (docs/writes.md, "Deep insert"): a create body whose property named by a to-many
 * relation (docs/relations.md) holds an array of child rows creates the row and its children in
 * one transaction, each child's foreign key columns filled from its parent's key — the id MySQL
 * made for it, or the value the body gave. Children may hold children of their own. Every row is
 * its own create, planned and guarded exactly as `createJob` plans one alone (the role's write
 * view and row conditions of its own table); the jobs run as one chain (execute/write.ts
 * runChain), so a refusal anywhere writes nothing. The OData adapter's deep insert is this too.
 */
import type { ColumnInfo, Relation, TableInfo } from '../db/schema-types.js';
import {
  deepInsertKeyMismatch,
  deepInsertKeyUnknown,
  deepInsertUnsupported,
  forbidden,
} from '../errors.js';
import type { Flavour } from '../execute/database.js';
import type { ChainStep, WriteResult } from '../execute/write.js';
import { isObject } from '../plan/write-body.js';
import { type Access, viewerFor } from '../policy/views.js';
import { NO_PREFERENCES, type Preferences } from '../query/prefer.js';
import { rowsText } from './answer.js';
import { may } from './decide.js';
import { createJob, type PlannedWrite } from './write.js';

type JsonObject = Readonly<Record<string, unknown>>;

/** One row of a deep insert: its own columns, and the rows of its to-many relations. */
interface DeepRow {
  readonly table: TableInfo;
  /** The body without its relations' properties: what `createJob` plans. */
  readonly own: JsonObject;
  /** The relation this row came in by (from its parent), and its parent's step; null at the top. */
  readonly from: { readonly relation: Relation; readonly parent: number } | null;
  /** The relations' rows, by relation name, as step numbers in the chain. */
  readonly children: ReadonlyMap<string, readonly number[]>;
}

/** A deep insert planned: its chain of one create per row, in parent-before-child order. */
export interface DeepWrite {
  readonly kind: 'deep';
  readonly steps: readonly ChainStep[];
  /** The top row's write, as made when its step last ran (its answer's `insertId`, `rows`). */
  readonly top: () => PlannedWrite;
  /** `,"related":{…}`: every child's own answer, by relation, from the chain's results. */
  readonly relatedText: (results: readonly WriteResult[]) => string;
}

/**
 * The deep insert a create body asks for, or null when it holds no related rows (a create as
 * ever). A property that is a column, or no relation the role may follow, is left to the create
 * to plan (an unknown column is its 400). Refused up front: a to-one relation's object (only
 * children are created: create the parent first and give its key), an array body holding
 * related rows, `Prefer: resolution` (an upsert's row may not be new, so it has no new key to
 * give), and a child table the role may not create (403, nothing written).
 */
export function deepCreate(
  table: TableInfo,
  body: unknown,
  access: Access | null,
  preferences: Preferences = NO_PREFERENCES,
  flavour: Flavour = 'mariadb',
): DeepWrite | null {
  if (Array.isArray(body)) {
    if (body.some((row) => isObject(row) && relatedOf(table, row, access).length > 0)) {
      throw deepInsertUnsupported(
        'Related rows can be created with one row, not with an array of rows: send each row in its own request',
      );
    }
    return null;
  }
  if (!isObject(body) || relatedOf(table, body, access).length === 0) return null;
  if (preferences.resolution !== null) {
    throw deepInsertUnsupported(
      'A create with related rows cannot be an upsert (Prefer: resolution)',
    );
  }
  const rows: DeepRow[] = [];
  addRow(rows, table, body, access, null);
  const childPreferences: Preferences = {
    ...NO_PREFERENCES,
    representation: preferences.representation,
  };
  const planned: PlannedWrite[] = [];
  const steps = rows.map(
    (row, index): ChainStep => ({
      job: (earlier) => {
        const own = row.from === null ? row.own : withParentKey(row, rows, earlier);
        const made = createJob(
          row.table,
          own,
          access,
          row.from === null ? preferences : childPreferences,
          flavour,
        );
        planned[index] = made;
        return made.job;
      },
    }),
  );
  return {
    kind: 'deep',
    steps,
    top: () => planned[0] as PlannedWrite,
    relatedText: (results) => relatedText(rows[0] as DeepRow, rows, planned, results),
  };
}

/** The body's properties that hold related rows: to-many relations the role may follow. */
function relatedOf(table: TableInfo, body: JsonObject, access: Access | null): Relation[] {
  const found: Relation[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (table.columnsByName.has(name)) continue;
    const relation = table.relations.get(name);
    if (relation === undefined || viewerFor(access)(relation.target) === null) continue;
    if (value === null || typeof value !== 'object') continue;
    if (relation.kind === 'one') {
      throw deepInsertUnsupported(
        `'${name}' is a to-one relation: a create makes only the rows of to-many relations; create the '${relation.target.name}' row first and give its key`,
      );
    }
    if (!Array.isArray(value)) {
      throw deepInsertUnsupported(`'${name}' must be an array of rows to create`);
    }
    found.push(relation);
  }
  return found;
}

/** The row, then each of its children (depth first): a parent's step comes before its children's. */
function addRow(
  rows: DeepRow[],
  table: TableInfo,
  body: JsonObject,
  access: Access | null,
  from: DeepRow['from'],
): void {
  const relations = relatedOf(table, body, access);
  const own: Record<string, unknown> = { ...body };
  for (const relation of relations) delete own[relation.name];
  const children = new Map<string, number[]>();
  const index = rows.length;
  rows.push({ table, own, from, children });
  for (const relation of relations) {
    const target = relation.target;
    // Decided up front: a child the role may not create refuses the whole insert.
    if (!may(access, { kind: 'table', table: target.name, action: 'create' })) throw forbidden();
    const steps: number[] = [];
    children.set(relation.name, steps);
    for (const child of body[relation.name] as unknown[]) {
      if (!isObject(child)) {
        throw deepInsertUnsupported(`Each row of '${relation.name}' must be a JSON object`);
      }
      // A key the parent's body gives is known now: a child disagreeing is refused before
      // anything runs (one made by MySQL is compared when the child's step runs).
      for (const { local, remote } of relation.on) {
        if (!(remote.name in child) || !(local.name in own)) continue;
        if (!sameValue(child[remote.name], own[local.name])) {
          throw deepInsertKeyMismatch(relation.name, remote.name);
        }
      }
      steps.push(rows.length);
      addRow(rows, target, child, access, { relation, parent: index });
    }
  }
}

/** The child's body with its foreign key columns set to its parent's key. */
function withParentKey(
  row: DeepRow,
  rows: readonly DeepRow[],
  earlier: readonly WriteResult[],
): JsonObject {
  const { relation, parent } = row.from as NonNullable<DeepRow['from']>;
  const parentRow = rows[parent] as DeepRow;
  const result = earlier[parent] as WriteResult;
  const own: Record<string, unknown> = { ...row.own };
  for (const { local, remote } of relation.on) {
    const value = parentKey(parentRow, local, result, relation);
    if (remote.name in own && !sameValue(own[remote.name], value)) {
      throw deepInsertKeyMismatch(relation.name, remote.name);
    }
    own[remote.name] = value;
  }
  return own;
}

/**
 * The parent's value of a key column: what its body gave, else the id MySQL made for its
 * AUTO_INCREMENT column (the insert id of its one-row INSERT). A key column neither gave (a
 * default, a trigger's value) cannot be known without reading the row back: refused.
 */
function parentKey(
  parent: DeepRow,
  column: ColumnInfo,
  result: WriteResult,
  relation: Relation,
): unknown {
  if (column.name in parent.own) return parent.own[column.name];
  if (column.autoIncrement && result.insertId !== null) return result.insertId;
  throw deepInsertKeyUnknown(relation.name, column.name);
}

/**
 * The same key value as JSON gives it: `5` and `"5"` are one key (the codec reads both for a
 * number column), `5` and `6` are not. Objects never match (no key column takes one).
 */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const scalar = (v: unknown) =>
    typeof v === 'number' || typeof v === 'string' || typeof v === 'bigint';
  return scalar(a) && scalar(b) && String(a) === String(b);
}

/** `,"related":{"<relation>":[{insertId, affectedRows[, rows][, related]}, …]}` of one row. */
function relatedText(
  row: DeepRow,
  rows: readonly DeepRow[],
  planned: readonly PlannedWrite[],
  results: readonly WriteResult[],
): string {
  if (row.children.size === 0) return '';
  const parts: string[] = [];
  for (const [name, steps] of row.children) {
    const answers = steps.map((step) => {
      const result = results[step] as WriteResult;
      const made = planned[step] as PlannedWrite;
      const rowsPart = rowsText(made.representation, result.rows);
      const nested = relatedText(rows[step] as DeepRow, rows, planned, results);
      return `{"insertId":${JSON.stringify(result.insertId)},"affectedRows":${result.affectedRows}${rowsPart}${nested}}`;
    });
    parts.push(`${JSON.stringify(name)}:[${answers.join(',')}]`);
  }
  return `,"related":{${parts.join(',')}}`;
}
