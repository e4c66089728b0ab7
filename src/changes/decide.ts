/**
 * Who sees a change, and as what (docs/changes.md), decided by MySQL itself with the very read
 * a subscriber would send: on a connection of the feed's own, each watched table has a
 * TEMPORARY table made `LIKE` it and named as it is, so that on this connection the table's
 * name means the temporary copy. The row images of a batch of transactions go into it, each
 * marked with its number, and each distinct compiled read (the role's `where`, the `$filter`,
 * the `@user` values bound, the `$select` and hidden columns as for a read: pipeline/read.ts)
 * runs once over them. Collations, functions and `@user` values are MySQL's own, and the row
 * JSON comes from the read's own serializer. Every statement that writes names the image
 * column, which the real table does not have: none of them can change the real table, even on
 * a connection that lost its temporary tables.
 */
import mysql from 'mysql2/promise';
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { bind } from '../execute/bind.js';
import type { CompiledRead } from '../pipeline/compiled-read.js';
import { quoteIdent } from '../sql/quote.js';
import type { Change, Row } from './reader.js';

/** The column that numbers the images in a temporary table. */
const IMAGE = '_tablegate_image';

/** One distinct read over a table: its compiled read with the caller's values bound. */
export interface ReadGroup {
  readonly key: string;
  readonly read: CompiledRead;
}

/** A row image of a change: the row before or after it. */
interface Image {
  readonly change: number;
  readonly side: 'before' | 'after';
  readonly row: Row;
}

/** What a batch decided: by group key, the image numbers that matched and their row JSON. */
export type Matches = Map<string, Map<number, string>>;

export interface Evaluated {
  /** Per change of the batch: its image numbers (before, after; -1 where there is none). */
  readonly images: readonly (readonly [number, number])[];
  readonly matches: Matches;
}

export class Evaluator {
  /** Tables whose temporary copy exists on the connection, by the TableInfo it was made for. */
  private readonly copies = new Map<string, TableInfo>();
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly connection: mysql.Connection) {}

  static async open(options: mysql.ConnectionOptions, setupSql: string): Promise<Evaluator> {
    const connection = await mysql.createConnection({ ...options, rowsAsArray: true });
    await connection.query(setupSql);
    // Images are copied as the log holds them: a zero date or a value older rules no longer
    // allow must still go in.
    await connection.query("SET sql_mode = 'NO_ENGINE_SUBSTITUTION'");
    return new Evaluator(connection);
  }

  async close(): Promise<void> {
    await this.connection.end().catch(() => {});
  }

  /** The table's copy is remade at its next use (its columns changed). */
  forget(table: string): void {
    this.copies.delete(table);
  }

  /** A statement of the feed's own on this connection (the binary log's settings). */
  ask(sql: string): Promise<unknown> {
    const run = this.queue.then(() => this.connection.query(sql));
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Runs `groups` over the images of `changes` (row changes of one table), one after another
   * on the one connection (calls queue).
   */
  evaluate(
    table: TableInfo,
    changes: readonly Change[],
    groups: readonly ReadGroup[],
  ): Promise<Evaluated> {
    const run = this.queue.then(() => this.run(table, changes, groups));
    this.queue = run.catch(() => {});
    return run;
  }

  private async run(
    table: TableInfo,
    changes: readonly Change[],
    groups: readonly ReadGroup[],
  ): Promise<Evaluated> {
    await this.copyOf(table);
    const images: Image[] = [];
    const numbers = changes.map((change, index): [number, number] => {
      if (!('before' in change)) return [-1, -1];
      let before = -1;
      let after = -1;
      if (change.before !== null) {
        before = images.length;
        images.push({ change: index, side: 'before', row: change.before });
      }
      if (change.after !== null) {
        after = images.length;
        images.push({ change: index, side: 'after', row: change.after });
      }
      return [before, after];
    });
    const name = quoteIdent(table.name);
    await this.connection.query(`DELETE FROM ${name} WHERE ${quoteIdent(IMAGE)} IS NOT NULL`);
    const columns = table.columns.filter((column) => !column.generated);
    if (images.length > 0) {
      const list = [...columns.map((c) => quoteIdent(c.name)), quoteIdent(IMAGE)].join(', ');
      const values: unknown[] = [];
      const tuples = images.map((image, number) => {
        for (const column of columns) values.push(parameterOf(column, image.row[column.name]));
        values.push(number);
        return `(${new Array(columns.length + 1).fill('?').join(', ')})`;
      });
      await this.connection.query(
        `INSERT INTO ${name} (${list}) VALUES ${tuples.join(', ')}`,
        values,
      );
    }
    const matches: Matches = new Map();
    for (const group of groups) {
      matches.set(group.key, await this.select(group.read));
    }
    return { images: numbers, matches };
  }

  /** The read over the images: the image number first, then the read's own select list. */
  private async select(read: CompiledRead): Promise<Map<number, string>> {
    const { sql, params } = read.select;
    if (!sql.startsWith('SELECT ')) throw new Error('a feed read must be a plain SELECT');
    const [rows] = await this.connection.execute(
      `SELECT ${quoteIdent(IMAGE)}, ${sql.slice('SELECT '.length)}`,
      bind(params),
    );
    const found = new Map<number, string>();
    for (const row of rows as unknown as unknown[][]) {
      found.set(Number(row[0]), read.serialize(row.slice(1)));
    }
    return found;
  }

  /**
   * The temporary copy of `table`, made when missing: `LIKE` the table (its columns, types and
   * collations), renamed to the table's name, without its keys (an update's two images share
   * a key) and with the image column added.
   */
  private async copyOf(table: TableInfo): Promise<void> {
    if (this.copies.get(table.name) === table) return;
    const name = quoteIdent(table.name);
    // Also after forget(): the old copy is still on the connection, and LIKE would copy it.
    // TEMPORARY: never the real table.
    await this.connection.query(`DROP TEMPORARY TABLE IF EXISTS ${name}`);
    this.copies.delete(table.name);
    const scratch = quoteIdent(`${IMAGE}_new`);
    await this.connection.query(`DROP TEMPORARY TABLE IF EXISTS ${scratch}`);
    await this.connection.query(`CREATE TEMPORARY TABLE ${scratch} LIKE ${name}`);
    const [indexes] = await this.connection.query(`SHOW INDEX FROM ${scratch}`);
    const names = new Set<string>();
    for (const row of indexes as unknown as unknown[][]) {
      // SHOW INDEX: Table, Non_unique, Key_name, …
      if (Number(row[1]) === 0) names.add(String(row[2]));
    }
    const alter: string[] = table.columns
      .filter((column) => column.autoIncrement || column.kind === 'geometry')
      .map((column) => `MODIFY ${quoteIdent(column.name)} ${column.columnType} NULL`);
    for (const index of names) {
      alter.push(index === 'PRIMARY' ? 'DROP PRIMARY KEY' : `DROP INDEX ${quoteIdent(index)}`);
    }
    alter.push(`ADD COLUMN ${quoteIdent(IMAGE)} INT UNSIGNED NOT NULL`);
    await this.connection.query(`ALTER TABLE ${scratch} ${alter.join(', ')}`);
    await this.connection.query(`ALTER TABLE ${scratch} RENAME TO ${name}`);
    this.copies.set(table.name, table);
  }
}

/** A decoded value as a statement parameter. */
function parameterOf(column: ColumnInfo, value: unknown): unknown {
  // The library gives a spatial value's coordinates without its SRID or exact type: none goes
  // in, and the feed sends no spatial column (http/changes.ts refuses one in $select).
  if (value === undefined || column.kind === 'geometry') return null;
  if (typeof value === 'bigint') return value.toString();
  return value;
}
