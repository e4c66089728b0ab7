/**
 * Relations between tables, named from the database's foreign keys (docs/relations.md): a key
 * from table C to table P gives C a to-one relation to P and P a to-many relation to C. Pure:
 * the schema cache hands it the tables and the key columns it read from information_schema.
 */
import { runAtOnce } from '../slices.js';
import type { ColumnInfo, Relation, TableInfo } from './schema-types.js';

/** One foreign key: its columns in C, in order, and the columns of P they reference. */
export interface ForeignKey {
  readonly name: string;
  readonly table: string;
  readonly columns: readonly string[];
  readonly referencedTable: string;
  readonly referencedColumns: readonly string[];
}

/** Mutable while the relations are being named; TableInfo exposes it read-only. */
type RelationMap = Map<string, Relation>;

const ID_SUFFIX = /_id$/i;

/**
 * `customer_id` → `customer`; a multi-column key, or a name that is only the suffix, → P's name,
 * or `<P>_by_<c1>` when C has several keys to P (so that none of them takes P's name by order).
 */
function toOneName(key: ForeignKey, several: boolean): string {
  const [only, ...more] = key.columns;
  if (only !== undefined && more.length === 0 && ID_SUFFIX.test(only) && only.length > 3) {
    return only.slice(0, -3);
  }
  return several ? `${key.referencedTable}_by_${only}` : key.referencedTable;
}

/**
 * Fills `relations` (one empty map per table, as the schema cache made them) from the keys, in
 * the order the naming rules decide collisions: first every to-one name (a name equal to a
 * column of C becomes `<P>_by_<c1>`), then every to-many name (`<C>_by_<c1>` when C has more
 * than one key to P, or when the name equals a column or a to-one name of P). A key whose
 * tables or columns are not served (the users table, another database) gives no relation; a
 * name still taken after these rules gets the key's name appended, so every name is unique.
 */
export function nameRelations(
  tables: ReadonlyMap<string, TableInfo>,
  relations: ReadonlyMap<string, RelationMap>,
  keys: readonly ForeignKey[],
): void {
  runAtOnce(relationSteps(tables, relations, keys));
}

/** Keys named between two steps of relationSteps. */
const KEYS_PER_STEP = 100;

/**
 * nameRelations in steps, a pause every KEYS_PER_STEP keys: the schema re-read runs it in slices
 * (db/schema.ts), as thousands of keys take milliseconds.
 */
export function* relationSteps(
  tables: ReadonlyMap<string, TableInfo>,
  relations: ReadonlyMap<string, RelationMap>,
  keys: readonly ForeignKey[],
): Generator<void, void> {
  const usable: {
    key: ForeignKey;
    from: TableInfo;
    to: TableInfo;
    pairs: { local: ColumnInfo; remote: ColumnInfo }[];
  }[] = [];
  let count = 0;
  for (const key of keys) {
    if (++count % KEYS_PER_STEP === 0) yield;
    const from = tables.get(key.table);
    const to = tables.get(key.referencedTable);
    if (from === undefined || to === undefined) continue;
    const local = key.columns.map((name) => from.columnsByName.get(name));
    const remote = key.referencedColumns.map((name) => to.columnsByName.get(name));
    if (local.some((c) => c === undefined) || remote.some((c) => c === undefined)) continue;
    const pairs = local.map((column, i) => ({
      local: column as ColumnInfo,
      remote: remote[i] as ColumnInfo,
    }));
    usable.push({ key, from, to, pairs });
  }
  const keysBetween = new Map<string, number>();
  for (const { key } of usable) {
    const between = `${key.table}\u0000${key.referencedTable}`;
    keysBetween.set(between, (keysBetween.get(between) ?? 0) + 1);
  }
  const add = (table: TableInfo, wanted: string, fallback: string, relation: Relation) => {
    const map = relations.get(table.name) as RelationMap;
    let name = wanted;
    if (map.has(name) || table.columnsByName.has(name)) name = fallback;
    if (map.has(name) || table.columnsByName.has(name)) name = `${fallback}_${relation.key}`;
    map.set(name, { ...relation, name });
  };
  const several = (key: ForeignKey) =>
    (keysBetween.get(`${key.table}\u0000${key.referencedTable}`) ?? 0) > 1;
  for (const { key, from, to, pairs } of usable) {
    if (++count % KEYS_PER_STEP === 0) yield;
    const first = key.columns[0] as string;
    add(from, toOneName(key, several(key)), `${to.name}_by_${first}`, {
      name: '',
      kind: 'one',
      key: key.name,
      target: to,
      on: pairs,
    });
  }
  for (const { key, from, to, pairs } of usable) {
    if (++count % KEYS_PER_STEP === 0) yield;
    const first = key.columns[0] as string;
    const byColumn = `${from.name}_by_${first}`;
    add(to, several(key) ? byColumn : from.name, byColumn, {
      name: '',
      kind: 'many',
      key: key.name,
      target: from,
      on: pairs.map(({ local, remote }) => ({ local: remote, remote: local })),
    });
  }
}
