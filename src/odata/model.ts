/**
 * The OData service one role sees (docs/odata.md): its entity sets (the tables and views it may
 * read, as the API description's view of the role gives them: policy/document-view.ts), each
 * with its OData names, its properties' Edm types (the column-type registry, types/edm.ts), its
 * key and its navigation properties; and the function and action imports of the routines it may
 * call. What `$metadata` says and what the OData routes translate names with; built per role and
 * schema version in slices (odata/service-cache.ts). Pure: (tables, routines, view) → model.
 */
import type { RoutineInfo } from '../db/routines.js';
import type { ColumnInfo, Relation, TableInfo } from '../db/schema-types.js';
import type { DocumentTableView, DocumentView } from '../http/openapi-document.js';
import { type EdmType, keyableEdm } from '../types/edm.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import { encodeName } from './names.js';

export const NAMESPACE = 'tablegate';

export interface ODataProperty {
  /** The OData name (names.ts). */
  readonly name: string;
  readonly column: ColumnInfo;
  readonly edm: EdmType;
}

export interface ODataNavigation {
  readonly name: string;
  readonly relation: Relation;
  /** The target's entity set, by its OData name. */
  readonly target: string;
  /** That set, of the same model (a deep insert's related rows are read as its entities). */
  readonly targetSet: ODataSet;
}

/**
 * How a set's key is formed: its primary key, else a unique key of NOT NULL columns, else all
 * its NOT NULL columns of types a key may have (`formed`: the set is read-only).
 */
export type KeyKind = 'primary' | 'unique' | 'formed';

export interface ODataSet {
  readonly name: string;
  readonly table: TableInfo;
  readonly view: DocumentTableView;
  readonly properties: readonly ODataProperty[];
  readonly property: ReadonlyMap<string, ODataProperty>;
  /** By the column's own name. */
  readonly column: ReadonlyMap<string, ODataProperty>;
  readonly navigation: readonly ODataNavigation[];
  readonly navigationByName: ReadonlyMap<string, ODataNavigation>;
  /** Never empty. */
  readonly key: readonly ODataProperty[];
  readonly keyKind: KeyKind;
  readonly insertable: boolean;
  readonly updatable: boolean;
  readonly deletable: boolean;
}

export interface ODataParameter {
  readonly name: string;
  readonly parameter: RoutineInfo['parameters'][number];
  readonly edm: EdmType;
}

export interface ODataRoutine {
  readonly name: string;
  readonly routine: RoutineInfo;
  /** The IN (and, for a procedure, INOUT) parameters. */
  readonly parameters: readonly ODataParameter[];
  readonly parameter: ReadonlyMap<string, ODataParameter>;
  /** A function's return type; null for a procedure. */
  readonly returns: EdmType | null;
}

export interface ODataModel {
  readonly sets: ReadonlyMap<string, ODataSet>;
  readonly byTable: ReadonlyMap<string, ODataSet>;
  readonly functions: ReadonlyMap<string, ODataRoutine>;
  readonly actions: ReadonlyMap<string, ODataRoutine>;
  /** The entity container's name: `Container`, or the first of `Container1`, … no set takes. */
  readonly container: string;
}

export const edmOf = (column: ColumnInfo): EdmType => COLUMN_KINDS[column.kind].edm.type(column);

const FULL_TABLE_VIEW = (table: TableInfo): DocumentTableView => ({
  read: table.columns,
  create: table.columns,
  update: table.columns,
  delete: true,
  relations: [...table.relations.values()],
});

/** Every table with all of its columns and actions: open mode, and auth mode without a policy. */
export const FULL_VIEW: DocumentView = {
  table: FULL_TABLE_VIEW,
  upload: true,
  download: true,
};

function keyOf(
  table: TableInfo,
  properties: ReadonlyMap<string, ODataProperty>,
): { key: ODataProperty[]; kind: KeyKind } | null {
  const usable = (names: readonly string[]): ODataProperty[] | null => {
    const found = names.map((name) => properties.get(name));
    return found.every(
      (p): p is ODataProperty => p !== undefined && !p.column.nullable && keyableEdm(p.edm),
    ) && found.length > 0
      ? (found as ODataProperty[])
      : null;
  };
  const primary = usable(table.primaryKey);
  if (primary !== null) return { key: primary, kind: 'primary' };
  for (const unique of table.uniqueKeys) {
    const found = usable(unique);
    if (found !== null) return { key: found, kind: 'unique' };
  }
  const formed = [...properties.values()].filter((p) => !p.column.nullable && keyableEdm(p.edm));
  return formed.length === 0 ? null : { key: formed, kind: 'formed' };
}

/** One table's set, or null when the role may not read it or it can have no key. */
function setOf(
  table: TableInfo,
  view: DocumentView,
): (Omit<ODataSet, 'navigation' | 'navigationByName'> & { relations: readonly Relation[] }) | null {
  const tableView = view.table(table);
  if (tableView === null) return null;
  const properties = tableView.read.map((column) => ({
    name: encodeName(column.name),
    column,
    edm: edmOf(column),
  }));
  const column = new Map(properties.map((p) => [p.column.name, p]));
  const keyed = keyOf(table, column);
  if (keyed === null) return null;
  const writable = keyed.kind !== 'formed' && table.updatable !== false;
  return {
    name: encodeName(table.name),
    table,
    view: tableView,
    properties,
    property: new Map(properties.map((p) => [p.name, p])),
    column,
    key: keyed.key,
    keyKind: keyed.kind,
    insertable: writable && tableView.create !== undefined,
    updatable: writable && tableView.update !== undefined,
    deletable: writable && tableView.delete === true,
    relations: tableView.relations,
  };
}

function routineOf(routine: RoutineInfo): ODataRoutine | null {
  const parameters = routine.parameters
    .filter((p) => p.mode !== 'out' && (routine.kind === 'procedure' || p.mode === 'in'))
    .map((parameter) => ({
      name: encodeName(parameter.name),
      parameter,
      edm: edmOf(parameter.column),
    }));
  return {
    name: encodeName(routine.name),
    routine,
    parameters,
    parameter: new Map(parameters.map((p) => [p.name, p])),
    returns: routine.returns === null ? null : edmOf(routine.returns),
  };
}

/**
 * The model, as steps that pause after every table (a schema of thousands builds between other
 * requests, odata/service-cache.ts). A routine whose OData name is an entity set's is left out
 * (it stays at `/rpc/<name>`), and so is a procedure that shares its name with a function.
 */
export function* modelSteps(
  tables: readonly TableInfo[],
  routines: readonly RoutineInfo[],
  view: DocumentView,
): Generator<void, ODataModel> {
  const made: NonNullable<ReturnType<typeof setOf>>[] = [];
  for (const table of tables) {
    const set = setOf(table, view);
    if (set !== null) made.push(set);
    yield;
  }
  const byTableName = new Map(made.map((set) => [set.table.name, set.name]));
  const sets = new Map<string, ODataSet>();
  const byTable = new Map<string, ODataSet>();
  for (const { relations, ...set } of made) {
    const navigation: ODataNavigation[] = [];
    for (const relation of relations) {
      const target = byTableName.get(relation.target.name);
      if (target === undefined) continue;
      navigation.push({
        name: encodeName(relation.name),
        relation,
        target,
        // Made once every set is: the target may come later in the loop, or be this set.
        get targetSet() {
          return sets.get(target) as ODataSet;
        },
      });
    }
    const full: ODataSet = {
      ...set,
      navigation,
      navigationByName: new Map(navigation.map((n) => [n.name, n])),
    };
    sets.set(full.name, full);
    byTable.set(full.table.name, full);
    yield;
  }
  const functions = new Map<string, ODataRoutine>();
  const actions = new Map<string, ODataRoutine>();
  const callable = routines.filter((routine) => view.routine?.(routine) ?? true);
  for (const routine of callable) {
    if (routine.kind !== 'function') continue;
    const made = routineOf(routine);
    if (made !== null && !sets.has(made.name)) functions.set(made.name, made);
  }
  for (const routine of callable) {
    if (routine.kind !== 'procedure') continue;
    const made = routineOf(routine);
    if (made !== null && !sets.has(made.name) && !functions.has(made.name)) {
      actions.set(made.name, made);
    }
  }
  let container = 'Container';
  for (let n = 1; sets.has(container) || functions.has(container) || actions.has(container); n++) {
    container = `Container${n}`;
  }
  return { sets, byTable, functions, actions, container };
}

/** The model at once (tests, small schemas). */
export function buildModel(
  tables: readonly TableInfo[],
  routines: readonly RoutineInfo[],
  view: DocumentView,
): ODataModel {
  const steps = modelSteps(tables, routines, view);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}
