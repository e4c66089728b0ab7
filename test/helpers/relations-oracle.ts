/**
 * The answer a read across relations must give, computed another way than the gateway does:
 * plain SELECTs per parent row instead of one statement (each expanded relation read for each
 * row by its key pairs, paged with LIMIT/OFFSET), paths as scalar subqueries instead of joins,
 * `all` as NOT EXISTS … NOT COALESCE(…, FALSE) instead of IS NOT TRUE. Built from the test's own
 * declaration of the schema (filter-arbitraries.ts RelationalModel), never from the gateway's
 * relations or plans. Values come back as sql-rows.ts reads them (the JSON types of docs/types.md).
 */
import type mysql from 'mysql2/promise';
import type { ColumnRef, FilterExpr, FilterLiteral } from '../../src/query/ast.js';
import type {
  ModelRelation,
  ModelTable,
  RelationalExpand,
  RelationalModel,
  RelationalRead,
} from './filter-arbitraries.js';
import { param, type SqlRow, sqlRows } from './sql-rows.js';

const ident = (name: string) => `\`${name.replaceAll('`', '``')}\``;

const COMPARE: Record<string, string> = { eq: '=', ne: '<>', lt: '<', le: '<=', gt: '>', ge: '>=' };

interface Scope {
  readonly home: { alias: string; table: string };
  readonly variables: ReadonlyMap<string, { alias: string; table: string }>;
}

export class RelationsOracle {
  private aliases = 0;

  /**
   * `visible`: per table, the SQL condition on its rows that a policy lets the caller see (a
   * table without one is seen whole): wherever the table is read, it is read as those rows only.
   */
  constructor(
    private readonly model: RelationalModel,
    private readonly connection: mysql.Connection,
    private readonly visible: Readonly<Record<string, string>> = {},
  ) {}

  /** The table as the caller sees it, for FROM and JOIN. */
  private from(table: string): string {
    const where = this.visible[table];
    return where === undefined ? ident(table) : `(SELECT * FROM ${ident(table)} WHERE ${where})`;
  }

  private table(name: string): ModelTable {
    const table = this.model.tables[name];
    if (table === undefined) throw new Error(`no table ${name} in the model`);
    return table;
  }

  private relation(table: string, name: string): ModelRelation {
    const relation = this.table(table).relations.find((r) => r.name === name);
    if (relation === undefined) throw new Error(`no relation ${name} on ${table}`);
    return relation;
  }

  private alias(): string {
    this.aliases += 1;
    return `o${this.aliases}`;
  }

  /** A value as SQL: numbers as exact literals (checked), everything else a parameter. */
  private value(literal: FilterLiteral, params: unknown[]): string {
    switch (literal.kind) {
      case 'number':
        if (!/^-?\d+(\.\d+)?$/.test(literal.text)) throw new Error(`odd number ${literal.text}`);
        return literal.text;
      case 'string':
        params.push(literal.value);
        return '?';
      case 'boolean':
        return literal.value ? 'TRUE' : 'FALSE';
      default:
        throw new Error(`no ${literal.kind} literals here`);
    }
  }

  /**
   * A column reference: its own table's column, or a scalar subquery walking the path's to-one
   * relations from the row it starts at (a variable's, or the home row's).
   */
  private column(ref: ColumnRef, scope: Scope): string {
    const path = ref.path ?? [];
    const variable = path.length > 0 ? scope.variables.get(path[0] as string) : undefined;
    const start = variable ?? scope.home;
    const steps = variable === undefined ? path : path.slice(1);
    if (steps.length === 0) return `${start.alias}.${ident(ref.name)}`;
    let table = start.table;
    let previous = start.alias;
    let from = '';
    let where = '';
    steps.forEach((name, i) => {
      const relation = this.relation(table, name);
      if (relation.kind !== 'one') throw new Error(`path through to-many ${name}`);
      const alias = this.alias();
      const on = relation.pairs
        .map(([local, remote]) => `${alias}.${ident(remote)} = ${previous}.${ident(local)}`)
        .join(' AND ');
      if (i === 0) {
        from = `${this.from(relation.target)} ${alias}`;
        where = on;
      } else {
        from += ` JOIN ${this.from(relation.target)} ${alias} ON ${on}`;
      }
      previous = alias;
      table = relation.target;
    });
    return `(SELECT ${previous}.${ident(ref.name)} FROM ${from} WHERE ${where})`;
  }

  /** A filter as a SQL condition of MySQL's three-valued logic. */
  filter(expr: FilterExpr, scope: Scope, params: unknown[]): string {
    switch (expr.kind) {
      case 'and':
      case 'or':
        return `(${expr.items.map((e) => this.filter(e, scope, params)).join(` ${expr.kind.toUpperCase()} `)})`;
      case 'not':
        return `(NOT ${this.filter(expr.expr, scope, params)})`;
      case 'compare': {
        if (expr.left.kind !== 'column')
          throw new Error('generated comparisons start with a column');
        const column = this.column(expr.left, scope);
        if (expr.right.kind === 'null') {
          return `(${column} IS ${expr.op === 'eq' ? '' : 'NOT '}NULL)`;
        }
        return `(${column} ${COMPARE[expr.op]} ${this.value(expr.right as FilterLiteral, params)})`;
      }
      case 'in': {
        if (expr.column.kind !== 'column') throw new Error('generated in() takes a column');
        const column = this.column(expr.column, scope);
        const values = expr.values.map((v) => this.value(v, params));
        return `(${column} IN (${values.join(', ')}))`;
      }
      case 'match': {
        if (expr.column.kind !== 'column' || typeof expr.value !== 'string') {
          throw new Error('generated matches take a column and a string');
        }
        const column = this.column(expr.column, scope);
        params.push(expr.value);
        // LOCATE, not LIKE: no wildcards to escape; the same collation decides.
        const found = `LOCATE(?, ${column})`;
        if (expr.fn === 'contains') return `(${found} > 0)`;
        if (expr.fn === 'startswith') return `(${found} = 1)`;
        params.pop();
        params.push(expr.value, expr.value);
        return `(RIGHT(${column}, CHAR_LENGTH(?)) = ?)`;
      }
      case 'lambda': {
        const path = expr.path;
        const variable = scope.variables.get(path[0] as string);
        let table = variable?.table ?? scope.home.table;
        let previous = variable?.alias ?? scope.home.alias;
        const steps = variable === undefined ? path : path.slice(1);
        const joins: string[] = [];
        const links: string[] = [];
        steps.forEach((name, i) => {
          const relation = this.relation(table, name);
          const alias = this.alias();
          const on = relation.pairs
            .map(([local, remote]) => `${alias}.${ident(remote)} = ${previous}.${ident(local)}`)
            .join(' AND ');
          if (i === 0) {
            joins.push(`${this.from(relation.target)} ${alias}`);
            links.push(on);
          } else {
            joins.push(`JOIN ${this.from(relation.target)} ${alias} ON ${on}`);
          }
          previous = alias;
          table = relation.target;
        });
        let sql = `SELECT 1 FROM ${joins.join(' ')} WHERE ${links.join(' AND ')}`;
        if (expr.expr === null || expr.variable === null) return `EXISTS (${sql})`;
        const inner: Scope = {
          home: scope.home,
          variables: new Map([...scope.variables, [expr.variable, { alias: previous, table }]]),
        };
        const condition = this.filter(expr.expr, inner, params);
        if (expr.op === 'any') return `EXISTS (${sql} AND ${condition})`;
        sql += ` AND NOT COALESCE(${condition}, FALSE)`;
        return `(NOT EXISTS (${sql}))`;
      }
    }
  }

  /**
   * The rows `read` gives of `table`, restricted by `where` (the key pairs to a parent row),
   * with its expansions, keys and values as the gateway must write them.
   */
  async rows(
    table: string,
    read: RelationalRead,
    where: { sql: string; params: unknown[] } | null = null,
  ): Promise<SqlRow[]> {
    const t = this.table(table);
    const alias = this.alias();
    const params: unknown[] = [];
    const columns = t.columns.map((c) => `${alias}.${ident(c.name)}`).join(', ');
    const conditions: string[] = [];
    if (where !== null) {
      conditions.push(where.sql.replaceAll('{t}', alias));
      params.push(...where.params);
    }
    const scope: Scope = { home: { alias, table }, variables: new Map() };
    if (read.filter !== null) conditions.push(this.filter(read.filter, scope, params));
    let sql = `SELECT ${columns} FROM ${this.from(table)} ${alias}`;
    if (conditions.length > 0) sql += ` WHERE ${conditions.join(' AND ')}`;
    const order =
      read.orderBy.length > 0
        ? read.orderBy
        : t.key.map((name) => ({
            ref: { kind: 'column' as const, name, position: 0 },
            desc: false,
          }));
    sql += ` ORDER BY ${order.map(({ ref, desc }) => `${this.column(ref, scope)}${desc ? ' DESC' : ''}`).join(', ')}`;
    if (read.top !== null || read.skip !== null) {
      sql += ` LIMIT ${read.top ?? '18446744073709551615'} OFFSET ${read.skip ?? 0}`;
    }
    const found = await sqlRows(this.connection, sql, params);
    const out: SqlRow[] = [];
    for (const row of found) {
      const shown: SqlRow = {};
      for (const name of read.select === '*' ? t.columns.map((c) => c.name) : read.select) {
        shown[name] = row[name];
      }
      for (const item of read.expand) {
        shown[item.path[0] as string] = await this.expanded(table, row, item);
      }
      out.push(shown);
    }
    return out;
  }

  /** One `$expand` item of one row: the related row or null, or the related rows. */
  private async expanded(table: string, row: SqlRow, item: RelationalExpand): Promise<unknown> {
    const [name, ...rest] = item.path as [string, ...string[]];
    const relation = this.relation(table, name);
    const read: RelationalRead =
      rest.length === 0
        ? item.read
        : {
            select: '*',
            filter: null,
            orderBy: [],
            top: null,
            skip: null,
            expand: [{ path: rest, read: item.read }],
          };
    const keys = relation.pairs.map(([local]) => row[local]);
    // A NULL key matches nothing.
    const where = {
      sql: relation.pairs.map(([, remote]) => `{t}.${ident(remote)} = ?`).join(' AND '),
      params: keys.map(param),
    };
    const related = keys.some((k) => k === null)
      ? []
      : await this.rows(relation.target, read, where);
    if (relation.kind === 'many') return related;
    if (related.length > 1) throw new Error(`to-one ${name} found ${related.length} rows`);
    return related[0] ?? null;
  }

  /** The number of rows of `table` the filter matches. */
  async count(table: string, filter: FilterExpr | null): Promise<number> {
    const alias = this.alias();
    const params: unknown[] = [];
    let sql = `SELECT COUNT(*) AS n FROM ${this.from(table)} ${alias}`;
    if (filter !== null) {
      sql += ` WHERE ${this.filter(filter, { home: { alias, table }, variables: new Map() }, params)}`;
    }
    const [row] = await sqlRows(this.connection, sql, params);
    return Number((row as { n: { text: string } }).n.text);
  }
}
