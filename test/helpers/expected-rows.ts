/**
 * What the gateway must answer for a table, computed from MariaDB's own text of each value
 * (docs/types.md): CAST(… AS CHAR) for numbers, dates and times (exactly the stored fractional
 * digits), TO_BASE64 for bytes, ST_AsGeoJSON for shapes, the JSON text for JSON. An oracle
 * independent of the gateway's row codec (src/types/rows.ts).
 */
import type mysql from 'mysql2/promise';

type Row = Record<string, unknown>;

const SPATIAL = new Set([
  'geometry',
  'point',
  'linestring',
  'polygon',
  'multipoint',
  'multilinestring',
  'multipolygon',
  'geometrycollection',
]);
const INTEGER = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'bigint', 'year', 'bit']);
const BINARY = new Set(['binary', 'varbinary', 'tinyblob', 'blob', 'mediumblob', 'longblob']);

const quote = (name: string) => `\`${name.replaceAll('`', '``')}\``;

/** The rows of `table` as the gateway should write them, in `orderBy` order. */
export async function expectedRows(
  admin: mysql.Connection,
  table: string,
  orderBy: string,
): Promise<Row[]> {
  const [columns] = await admin.query(
    `SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS
      WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`,
    [table],
  );
  const [checks] = await admin.query(
    `SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
      WHERE CONSTRAINT_SCHEMA = DATABASE() AND TABLE_NAME = ?`,
    [table],
  );
  const jsonColumns = new Set(
    (checks as { CHECK_CLAUSE: string }[])
      .map((row) => /^json_valid\(`(.+)`\)$/i.exec(row.CHECK_CLAUSE.trim())?.[1])
      .filter((name): name is string => name !== undefined),
  );
  const list = columns as { COLUMN_NAME: string; DATA_TYPE: string }[];
  const select = list.map(({ COLUMN_NAME: name, DATA_TYPE: type }) => {
    const q = quote(name);
    if (SPATIAL.has(type)) return `ST_AsGeoJSON(${q})`;
    if (BINARY.has(type)) return `REPLACE(TO_BASE64(${q}), '\\n', '')`;
    if (type === 'bit') return `CAST(${q} + 0 AS CHAR)`;
    if (type === 'float') return `CAST(${q} + 0e0 AS CHAR)`;
    return `CAST(${q} AS CHAR)`;
  });
  const [rows] = await admin.query({
    sql: `SELECT ${select.join(', ')} FROM ${quote(table)} ORDER BY ${orderBy}`,
    rowsAsArray: true,
  });
  return (rows as unknown[][]).map((row) =>
    Object.fromEntries(
      list.map(({ COLUMN_NAME: name, DATA_TYPE: type }, i) => {
        const text = row[i] as string | null;
        if (text === null) return [name, null];
        if (SPATIAL.has(type) || type === 'json' || jsonColumns.has(name)) {
          return [name, JSON.parse(text)];
        }
        if (INTEGER.has(type)) {
          const n = Number(text);
          return [name, Number.isSafeInteger(n) ? n : text];
        }
        if (type === 'decimal' || type === 'double') return [name, Number(text)];
        if (type === 'float') return [name, shortestFloat32(Number(text))];
        return [name, text];
      }),
    ),
  );
}

/** The shortest decimal that is the same 32-bit float as `n` (the float widened to a double). */
function shortestFloat32(n: number): number {
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(n.toPrecision(digits));
    if (Math.fround(candidate) === Math.fround(n)) return candidate;
  }
  return n;
}
