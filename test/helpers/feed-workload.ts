/**
 * A seeded workload for the change feed's differential test (test/integration/changes-
 * differential.test.ts): rows of a table of varied types, transactions of inserts, updates and
 * deletes that move rows in and out of views (owners and names that differ only by case,
 * accents or a trailing space, NULLs), and `$filter`/`$select` options over the columns a caller
 * may read. Values are drawn from small pools so that filters and policies meet them often.
 */
import fc from 'fast-check';
import type { TableInfo } from '../../src/db/schema-types.js';
import { filterArb, filterText, spellingArb } from './filter-arbitraries.js';

export const ITEMS_TABLE = `CREATE TABLE items (
  id INT PRIMARY KEY,
  owner VARCHAR(80) NOT NULL,
  name VARCHAR(40) NULL,
  qty INT NULL,
  price DECIMAL(10,2) NULL,
  ratio DOUBLE NULL,
  due DATE NULL,
  seen DATETIME(3) NULL,
  kind ENUM('red','green','blue') NULL,
  active BOOLEAN NULL,
  secret VARCHAR(40) NULL,
  meta JSON NULL,
  code CHAR(6) NULL,
  f FLOAT NULL,
  ts TIMESTAMP(3) NULL,
  bin VARBINARY(8) NULL,
  tags SET('x','y','z') NULL,
  tm TIME NULL,
  big BIGINT UNSIGNED NULL,
  tm3 TIME(3) NULL,
  y YEAR NULL,
  bits BIT(5) NULL,
  uid BIGINT UNSIGNED NULL,
  total DECIMAL(14,2) AS (qty * price) VIRTUAL,
  KEY name (name)
)`;

export type Value = string | number | Buffer | null;
export type ItemRow = Record<string, Value>;

export const COLUMNS = [
  'id',
  'owner',
  'name',
  'qty',
  'price',
  'ratio',
  'due',
  'seen',
  'kind',
  'active',
  'secret',
  'meta',
  'code',
  'f',
  'ts',
  'bin',
  'tags',
  'tm',
  'big',
  'tm3',
  'y',
  'bits',
  'uid',
  'total',
] as const;

/** The columns a statement writes (not the generated one). */
const WRITTEN = COLUMNS.filter((c) => c !== 'total');

/** Owners: two users' emails and the ones a `*_ci` collation calls equal to them. */
export const OWNERS = [
  'ann@example.com',
  'Ánn@example.com',
  'ANN@example.com',
  'ánn@example.com',
  'ann@example.com ',
  'xann@example.com',
  'bob@example.com',
  'public',
];

/** Names in families that differ only by case, accents or trailing space under unicode_ci. */
const NAME_FAMILIES: readonly (readonly string[])[] = [
  ['apple', 'Apple', 'APPLE', 'äpple', 'Äpple', 'apple '],
  ['pear', 'péar', 'PEAR', 'Pear'],
  ['kiwi', 'KÍWI', 'kíwi'],
  ['straße', 'STRASSE', 'strasse', 'ss'],
  ['e', 'é', 'E', 'È'],
  ["o'neil", 'a%b', 'a_b', '😀 fig', ''],
];
const NAMES = NAME_FAMILIES.flat();

const POOLS: Record<string, readonly Value[]> = {
  qty: [-3, 0, 1, 5, 6, 12, 20, null],
  price: ['0.00', '1.50', '10.49', '10.50', '99.99', '-3.20', null],
  ratio: [0.1, 0.25, 1e-7, 2.71, -2.5, 1e20, 0, null],
  due: ['2024-02-29', '2024-12-31', '2025-01-01', '2025-06-15', '1999-01-01', null],
  seen: [
    '2025-06-15 10:20:30.123',
    '2024-01-01 00:00:00.000',
    '2025-12-31 23:59:59.999',
    '2025-03-01 00:00:00.500',
    null,
  ],
  kind: ['red', 'green', 'blue', null],
  active: [0, 1, null],
  secret: ['s1', 's2', 'ann@example.com', null],
  meta: ['{"a": 1}', '[1, 2]', '"x"', 'null', '{"b": "É"}', null],
  code: ['ab', 'AB ', 'ä', '', ' x', null],
  f: [0.1, 1.5, 3.4e38, -0.25, 1e-10, null],
  ts: ['2025-06-15 10:20:30.123', '2024-02-29 23:59:59.999', '2025-01-01 00:00:00.000', null],
  bin: [Buffer.from([0, 255]), Buffer.from('a'), Buffer.from('A'), Buffer.alloc(0), null],
  tags: ['x', 'x,z', 'y', '', null],
  tm: [
    '10:20:30',
    '-01:00:00',
    '-00:00:01',
    '-12:30:00',
    '-838:59:59',
    '838:59:59',
    '00:00:00',
    null,
  ],
  tm3: ['-01:00:00.000', '-00:00:00.500', '-10:00:00.250', '-00:01:00.001', '12:00:00.999', null],
  y: [2024, 2025, 1999, null],
  bits: [0, 5, 31, null],
  // Users' ids: the test's users are 1 to 4.
  uid: [1, 2, 3, 4, 99, null],
  big: ['18446744073709551615', '0', '9007199254740993', '9007199254740992', null],
};

export type Random = () => number;

export const pick = <T>(random: Random, items: readonly T[]): T =>
  items[Math.floor(random() * items.length)] as T;

export function randomRow(random: Random, id: number): ItemRow {
  const row: ItemRow = { id, owner: pick(random, OWNERS), name: pick(random, [...NAMES, null]) };
  for (const [column, pool] of Object.entries(POOLS)) row[column] = pick(random, pool);
  return row;
}

export interface Statement {
  readonly sql: string;
  readonly params: readonly Value[];
  /** The rows it may change, in the order the log holds them (ascending key). */
  readonly ids: readonly number[];
  /** An update of the key: the row's id before and after. */
  readonly rekey?: readonly [from: number, to: number];
}

const columnList = WRITTEN.join(', ');

export function insertOf(row: ItemRow): Statement {
  return {
    sql: `INSERT INTO items (${columnList}) VALUES (${WRITTEN.map(() => '?').join(', ')})`,
    params: WRITTEN.map((c) => row[c] ?? null),
    ids: [row.id as number],
  };
}

/** A new value for `column` of `row`: a case/accent variant, NULL, or another from its pool. */
function changedValue(random: Random, column: string, row: ItemRow): Value {
  if (column === 'owner') return pick(random, OWNERS);
  if (column === 'name') {
    const current = row.name;
    const family = NAME_FAMILIES.find((f) => f.includes(current as string));
    if (family !== undefined && random() < 0.6) return pick(random, family);
    return pick(random, [...NAMES, null]);
  }
  if (random() < 0.25) return null;
  return pick(random, POOLS[column] as readonly Value[]);
}

/** SET items of 1–3 columns for `rows` (the model, changed to match). */
function assignments(random: Random, rows: readonly ItemRow[]): Map<string, Value> {
  const count = 1 + Math.floor(random() * 3);
  const set = new Map<string, Value>();
  for (let c = 0; c < count; c++) {
    const column = pick(random, WRITTEN.slice(1));
    set.set(column, changedValue(random, column, rows[0] as ItemRow));
  }
  for (const row of rows) for (const [column, value] of set) row[column] = value;
  return set;
}

/**
 * One transaction's statements, no row changed twice (nor one in `touched`, the rows of the
 * transactions before it in a burst), keeping `rows` (the model of the table) as it will be: inserts of new ids, updates of 1–3 columns (sometimes of the key), deletes,
 * and first sometimes an update or delete of a range of ids (several rows in one statement).
 */
export function randomTransaction(
  random: Random,
  rows: Map<number, ItemRow>,
  nextId: () => number,
  touched = new Set<number>(),
): Statement[] {
  const size = 1 + Math.floor(random() * 6);
  const statements: Statement[] = [];
  // A range would take in rows that `touched` holds from the transactions before.
  if (random() < 0.15 && rows.size > 5 && touched.size === 0) {
    const sorted = [...rows.keys()].sort((a, b) => a - b);
    const first = Math.floor(random() * (sorted.length - 2));
    const span = sorted.slice(first, first + 2 + Math.floor(random() * 4));
    const [low, high] = [span[0] as number, span[span.length - 1] as number];
    for (const id of span) touched.add(id);
    if (random() < 0.7) {
      const set = assignments(
        random,
        span.map((id) => rows.get(id) as ItemRow),
      );
      statements.push({
        sql: `UPDATE items SET ${[...set.keys()].map((c) => `${c} = ?`).join(', ')} WHERE id BETWEEN ? AND ?`,
        params: [...set.values(), low, high],
        ids: span,
      });
    } else {
      for (const id of span) rows.delete(id);
      statements.push({
        sql: 'DELETE FROM items WHERE id BETWEEN ? AND ?',
        params: [low, high],
        ids: span,
      });
    }
  }
  for (let i = statements.length; i < size; i++) {
    const ids = [...rows.keys()].filter((id) => !touched.has(id));
    const roll = random();
    const insertShare = rows.size < 15 ? 0.5 : rows.size > 40 ? 0.05 : 0.2;
    const deleteShare = rows.size > 40 ? 0.4 : rows.size < 15 ? 0.05 : 0.15;
    if (ids.length === 0 || roll < insertShare) {
      const row = randomRow(random, nextId());
      rows.set(row.id as number, row);
      touched.add(row.id as number);
      statements.push(insertOf(row));
    } else if (roll < insertShare + deleteShare) {
      const id = pick(random, ids);
      rows.delete(id);
      touched.add(id);
      statements.push({ sql: 'DELETE FROM items WHERE id = ?', params: [id], ids: [id] });
    } else if (roll < insertShare + deleteShare + 0.08) {
      // The key changes (with another column, sometimes): the row leaves its old key.
      const from = pick(random, ids);
      const to = nextId();
      const row = rows.get(from) as ItemRow;
      rows.delete(from);
      const set = random() < 0.5 ? new Map<string, Value>() : assignments(random, [row]);
      row.id = to;
      rows.set(to, row);
      touched.add(from);
      touched.add(to);
      statements.push({
        sql: `UPDATE items SET ${['id = ?', ...[...set.keys()].map((c) => `${c} = ?`)].join(', ')} WHERE id = ?`,
        params: [to, ...set.values(), from],
        ids: [from, to],
        rekey: [from, to],
      });
    } else {
      const id = pick(random, ids);
      const set = assignments(random, [rows.get(id) as ItemRow]);
      touched.add(id);
      statements.push({
        sql: `UPDATE items SET ${[...set.keys()].map((c) => `${c} = ?`).join(', ')} WHERE id = ?`,
        params: [...set.values(), id],
        ids: [id],
      });
    }
  }
  return statements;
}

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Leaves of `$filter` by the column they read; each gives a filter's text. */
const LEAVES: readonly (readonly [string, (random: Random) => string])[] = [
  ['name', (r) => `name ${pick(r, ['eq', 'ne', 'lt', 'ge'])} ${quote(pick(r, NAMES))}`],
  [
    'name',
    (r) =>
      `${pick(r, ['contains', 'startswith', 'endswith'])}(name, ${quote(pick(r, ['pp', 'PP', 'e', 'é', 'ss', 'ß', 'a%', '%', '_', "'", 'i', ' ']))})`,
  ],
  ['name', (r) => `${pick(r, ['tolower', 'toupper', 'trim'])}(name) eq ${quote(pick(r, NAMES))}`],
  ['name', (r) => `length(name) ${pick(r, ['eq', 'gt', 'le'])} ${pick(r, [0, 1, 4, 5, 6])}`],
  ['name', (r) => `name in (${quote(pick(r, NAMES))}, ${quote(pick(r, NAMES))})`],
  ['name', (r) => `name ${pick(r, ['eq', 'ne'])} null`],
  ['owner', (r) => `owner ${pick(r, ['eq', 'ne'])} ${quote(pick(r, OWNERS))}`],
  [
    'owner',
    (r) =>
      `${pick(r, ['contains', 'startswith', 'endswith'])}(owner, ${quote(pick(r, ['ann', 'ÁNN', 'example.com', 'com ', 'x']))})`,
  ],
  ['qty', (r) => `qty ${pick(r, ['eq', 'ne', 'lt', 'gt', 'le'])} ${pick(r, [-3, 0, 5, 6, 12])}`],
  ['qty', (r) => `qty ${pick(r, ['eq', 'ne'])} null`],
  [
    'price',
    (r) =>
      `price ${pick(r, ['eq', 'lt', 'ge'])} ${pick(r, ['10.5', '10.50', '0', '99.99', '-3.2', '1.5e1'])}`,
  ],
  [
    'ratio',
    (r) => `ratio ${pick(r, ['lt', 'gt', 'eq'])} ${pick(r, ['0.1', '0.25', '1e-7', '0', '1E20'])}`,
  ],
  ['due', (r) => `due ${pick(r, ['lt', 'ge', 'eq'])} ${pick(r, ['2025-01-01', '2024-02-29'])}`],
  [
    'due',
    (r) =>
      `${pick(r, ['year', 'month', 'day'])}(due) ${pick(r, ['eq', 'ge'])} ${pick(r, [2025, 6, 29, 1])}`,
  ],
  [
    'seen',
    (r) =>
      `seen ${pick(r, ['lt', 'ge', 'eq'])} ${pick(r, ['2025-06-15T10:20:30.123Z', '2025-01-01T00:00:00Z', '2025-03-01T01:00:00.5+01:00'])}`,
  ],
  [
    'seen',
    (r) =>
      `${pick(r, ['hour', 'minute', 'second', 'year'])}(seen) ${pick(r, ['eq', 'ge'])} ${pick(r, [0, 10, 59, 2025])}`,
  ],
  ['seen', (r) => `date(seen) eq ${pick(r, ['2025-06-15', '2024-01-01'])}`],
  [
    'kind',
    (r) => `kind ${pick(r, ['eq', 'ne'])} ${quote(pick(r, ['red', 'RED', 'green', 'blue']))}`,
  ],
  ['kind', () => `kind in ('red', 'Blue')`],
  ['active', (r) => `active ${pick(r, ['eq', 'ne'])} ${pick(r, ['true', 'false', 'null'])}`],
  ['meta', (r) => `meta ${pick(r, ['eq', 'ne'])} null`],
  [
    'id',
    (r) =>
      `id ${pick(r, ['eq', 'lt', 'ge', 'ne'])} ${pick(r, ['5', '10.5', '-1e300', '1e300', '99999999999999999999', '7.0'])}`,
  ],
  ['id', () => `id in (3, 7.0, 12.5, 18446744073709551616)`],
  [
    'code',
    (r) => `code ${pick(r, ['eq', 'gt'])} ${quote(pick(r, ['ab', 'AB', 'ab ', 'a', 'ä', '']))}`,
  ],
  ['code', (r) => `${pick(r, ['length', 'trim'])}(code) eq ${pick(r, ['2', '0', "'x'", "'AB'"])}`],
  [
    'f',
    (r) =>
      `f ${pick(r, ['eq', 'lt', 'ge'])} ${pick(r, ['0.1', '1.5', '3.4e38', '-0.25', '1e-10'])}`,
  ],
  ['total', (r) => `total ${pick(r, ['gt', 'eq', 'lt'])} ${pick(r, ['10', '0', '63.00', '-9.6'])}`],
  ['total', () => 'total eq null'],
  [
    'bin',
    (r) => `bin ${pick(r, ['eq', 'ne', 'lt'])} ${pick(r, ["'AP8='", "'YQ=='", "'QQ=='", "''"])}`,
  ],
  ['bin', (r) => `bin ${pick(r, ['eq', 'ne'])} null`],
  ['tags', (r) => `tags ${pick(r, ['eq', 'ne'])} ${quote(pick(r, ['x', 'x,z', 'X,Z', '']))}`],
  ['tags', (r) => `contains(tags, ${quote(pick(r, ['z', 'x,', 'Y']))})`],
  [
    'tm',
    (r) => `tm ${pick(r, ['lt', 'ge', 'eq'])} ${pick(r, ['12:00:00', '00:00:00', '10:20:30.000'])}`,
  ],
  [
    'tm',
    (r) =>
      `${pick(r, ['hour', 'minute', 'second'])}(tm) ${pick(r, ['eq', 'gt'])} ${pick(r, [0, 10, 30, 59])}`,
  ],
  [
    'tm3',
    (r) =>
      `tm3 ${pick(r, ['lt', 'ge', 'eq'])} ${pick(r, ['-00:00:00.5', '00:00:00', '12:00:00.999'])}`,
  ],
  [
    'tm3',
    (r) =>
      `${pick(r, ['hour', 'minute', 'second'])}(tm3) ${pick(r, ['eq', 'gt'])} ${pick(r, [0, 1, 10])}`,
  ],
  ['y', (r) => `y ${pick(r, ['eq', 'ge'])} ${pick(r, [2025, 1999, 0])}`],
  ['bits', (r) => `bits ${pick(r, ['eq', 'gt'])} ${pick(r, [0, 5, 30])}`],
  [
    'big',
    (r) =>
      `big ${pick(r, ['eq', 'gt', 'le'])} ${pick(r, ['9007199254740992', '9007199254740993', '18446744073709551615', '1.8446744073709552e19', '0'])}`,
  ],
  [
    'ts',
    (r) =>
      `ts ${pick(r, ['ge', 'lt', 'eq'])} ${pick(r, ['2025-01-01T00:00:00Z', '2025-06-15T12:20:30.123+02:00', '2024-03-01T00:00:00.000+00:00'])}`,
  ],
  [
    'ts',
    (r) =>
      `${pick(r, ['hour', 'day', 'second'])}(ts) ${pick(r, ['eq', 'ge'])} ${pick(r, [0, 10, 29, 59])}`,
  ],
  ['meta', (r) => `contains(meta, ${quote(pick(r, ['a', 'É', '1']))})`],
];

/** A random `$filter` over `visible` columns, up to `depth` levels of and/or/not. */
export function randomFilter(random: Random, visible: readonly string[], depth = 2): string {
  const leaves = LEAVES.filter(([column]) => visible.includes(column));
  const roll = random();
  if (depth === 0 || roll < 0.45) return pick(random, leaves)[1](random);
  if (roll < 0.55) return `not (${randomFilter(random, visible, depth - 1)})`;
  const parts = Array.from({ length: 2 + Math.floor(random() * 2) }, () =>
    randomFilter(random, visible, depth - 1),
  );
  return `(${parts.join(pick(random, [' and ', ' or ']))})`;
}

/** Filters from the grammar's own generator (any literal, any spelling) over `visible` columns. */
export function grammarFilters(
  table: TableInfo,
  visible: readonly string[],
  seed: number,
  count: number,
): string[] {
  const own = { ...table, columns: table.columns.filter((c) => visible.includes(c.name)) };
  return fc
    .sample(fc.tuple(filterArb(own, 3), spellingArb), { seed, numRuns: count })
    .map(([ast, spelling]) => filterText(ast, spelling));
}

/** A random `$select`: absent, or a shuffled subset of `visible`, with or without the key. */
export function randomSelect(random: Random, visible: readonly string[]): string | null {
  if (random() < 0.3) return null;
  const chosen = visible.filter(() => random() < 0.5);
  if (chosen.length === 0) chosen.push(pick(random, visible));
  for (let i = chosen.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [chosen[i], chosen[j]] = [chosen[j] as string, chosen[i] as string];
  }
  return chosen.join(',');
}
