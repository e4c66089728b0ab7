/**
 * The bench's `items` table (lib/database.mjs) as the schema cache holds it, for the
 * micro-benchmarks that run the read stages without a server (read-pipeline.mjs, read-shape.mjs).
 */
function column(name, dataType, kind) {
  return {
    name,
    dataType,
    columnType: dataType,
    kind,
    nullable: false,
    unsigned: false,
    autoIncrement: name === 'id',
    hasDefault: name === 'id',
    generated: false,
    maxLength: kind === 'string' ? 100 : null,
    numericPrecision: null,
    numericScale: null,
  };
}
const columns = [
  column('id', 'int', 'integer'),
  column('name', 'varchar', 'string'),
  column('category', 'varchar', 'string'),
  column('price', 'decimal', 'decimal'),
  column('stock', 'int', 'integer'),
  column('created_at', 'datetime', 'datetime'),
];
export const ITEMS_TABLE = {
  name: 'items',
  kind: 'table',
  columns,
  columnsByName: new Map(columns.map((c) => [c.name, c])),
  primaryKey: ['id'],
};
