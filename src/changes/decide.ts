/**
 * Who sees a change, and as what (docs/changes.md), decided by MySQL itself with the very read
 * a subscriber would send: on a connection of the feed's own, each watched table has a
 * TEMPORARY table made `LIKE` it and named as it is, so that on this connection the table's
 * name means the temporary copy. The row images of a batch of transactions go into it, each
 * marked with its number, and each distinct compiled read (the role's `where`, the `$filter`,
 * the `@user` values bound, the `$select` and hidden columns as for a read: pipeline/read.ts)
 * runs once over them, the subscriber's key read's columns in front of its select list.
 * Collations, functions and `@user` values are MySQL's own, and the row and key JSON come from
 * the reads' own serializers. Every statement that writes names the image
 * column, which the real table does not have: none of them can change the real table, even on
 * a connection that lost its temporary tables.
 */
import mysql from 'mysql2/promise';
import type { ColumnInfo, TableInfo } from '../db/schema-types.js';
import { bind } from '../execute/bind.js';
import type { CompiledRead } from '../pipeline/compiled-read.js';
import type { Change, Row } from '../row-change.js';
import { quoteIdent } from '../sql/quote.js';

/** The column that numbers the images in a temporary table. */
const IMAGE = '_tablegate_image';

/** One distinct read over a table: its compiled read with the caller's values bound. */
export interface ReadGroup {
  readonly key: string;
  readonly read: CompiledRead;
}

/**
 * What subscribers of one read and one key read share: the rows their read matches and the
 * keys of those rows as they may see them, decided together.
 */
export interface ReadPair {
  readonly key: string;
  readonly read: ReadGroup;
  readonly keys: ReadGroup;
}

/** A row image of a change: the row before or after it. */
interface Image {
  readonly change: number;
  readonly side: 'before' | 'after';
  readonly row: Row;
}

/** What one pair's reads decided: by image number, its row JSON and its key JSON. */
export interface PairDecision {
  readonly rows: Map<number, string>;
  readonly keys: Map<number, string>;
}

export interface Evaluated {
  /** Per change of the batch: its image numbers (before, after; -1 where there is none). */
  readonly images: readonly (readonly [number, number])[];
  /** By pair key. */
  readonly matches: Map<string, PairDecision>;
}

/** One event a change makes for a subscriber. */
export interface Decided {
  readonly op: 'insert' | 'update' | 'delete';
  /** The image whose key the event carries (and whose row, unless it is a delete). */
  readonly image: number;
  /**
   * The first of the two events of a change that moved a row to another key: resuming after
   * it must send the change again (its id is the place before the change).
   */
  readonly beforeChange: boolean;
}

/**
 * What one change is to a subscriber, as its reads before and after the change tell: `rows`
 * holds the images its read matched, `keys` every image's key as it may see it. Matched after
 * only: an `insert`; before only: a `delete` of the old key; both: an `update` — unless the
 * key it sees changed, for then the row left the old key and came in at the new one, as two
 * reads keyed by it show: a `delete` of the old key, then an `insert`.
 */
export function eventsOf(
  op: 'insert' | 'update' | 'delete',
  [before, after]: readonly [number, number],
  rows: ReadonlyMap<number, string>,
  keys: ReadonlyMap<number, string>,
): Decided[] {
  const was = before >= 0 && rows.has(before);
  const is = after >= 0 && rows.has(after);
  if (was && is && keys.get(before) !== keys.get(after)) {
    return [
      { op: 'delete', image: before, beforeChange: true },
      { op: 'insert', image: after, beforeChange: false },
    ];
  }
  if (was && is) return [{ op, image: op === 'delete' ? before : after, beforeChange: false }];
  if (is) return [{ op: 'insert', image: after, beforeChange: false }];
  if (was) return [{ op: 'delete', image: before, beforeChange: false }];
  return [];
}

export class Evaluator {
  /** Tables whose temporary copy exists on the connection, by the TableInfo it was made for. */
  private readonly copies = new Map<string, TableInfo>();
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly connection: mysql.Connection,
    /** The server's max_allowed_packet: no statement may be longer. */
    private readonly packetBytes: number,
  ) {}

  static async open(options: mysql.ConnectionOptions, setupSql: string): Promise<Evaluator> {
    // Several statements a text: a batch's images go in with one round trip (write()). Only the
    // feed's own texts go to this connection, values escaped, names quoted.
    const connection = await mysql.createConnection({
      ...options,
      rowsAsArray: true,
      multipleStatements: true,
    });
    await connection.query(setupSql);
    // Images are copied as the log holds them: a zero date or a value older rules no longer
    // allow must still go in.
    await connection.query("SET sql_mode = 'NO_ENGINE_SUBSTITUTION'");
    const [[packet]] = (await connection.query('SELECT @@max_allowed_packet')) as unknown as [
      unknown[][],
    ];
    return new Evaluator(connection, Number(packet?.[0]));
  }

  async close(): Promise<void> {
    await this.connection.end().catch(() => {});
  }

  /** The table's copy is remade at its next use (its columns changed). */
  forget(table: string): void {
    this.copies.delete(table);
  }

  /**
   * The index of the first of `changes` with a row image that cannot go into the copy in one
   * statement within max_allowed_packet (the server would refuse it and drop the connection),
   * or -1. Such a row is too large for a read to answer, too.
   */
  tooLarge(table: TableInfo, changes: readonly Change[]): number {
    const columns = table.columns.filter((column) => !column.generated);
    // The statement's own text around the row: its columns' names and the image number.
    const limit = this.packetBytes - 1024 - columns.reduce((n, c) => n + c.name.length * 2 + 4, 0);
    const fits = (row: Row | null): boolean => {
      if (row === null) return true;
      const values = columns.map((column) => parameterOf(column, row[column.name]));
      // An upper bound first; the exact escaped length only for a row near the limit.
      if (values.reduce((sum: number, value) => sum + textBytes(value), 16) <= limit) return true;
      let bytes = 16;
      for (const value of values) bytes += Buffer.byteLength(mysql.escape(value as never)) + 2;
      return bytes <= limit;
    };
    return changes.findIndex(
      (change) => 'before' in change && !(fits(change.before) && fits(change.after)),
    );
  }

  /** A statement of the feed's own on this connection (the binary log's settings). */
  ask(sql: string): Promise<unknown> {
    const run = this.queue.then(() => this.connection.query(sql));
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Runs the reads of `pairs` over the images of `changes` (row changes of one table), one
   * batch after another on the one connection (calls queue). A batch costs one round trip to
   * write its images (the DELETE and the INSERTs as one multi-statement text, as the INSERT
   * was text before), then one per distinct statement: each pair's read with the key columns
   * of its key read in front, so a key read costs no statement of its own.
   */
  evaluate(
    table: TableInfo,
    changes: readonly Change[],
    pairs: readonly ReadPair[],
  ): Promise<Evaluated> {
    const run = this.queue.then(() => this.run(table, changes, pairs));
    this.queue = run.catch(() => {});
    return run;
  }

  private async run(
    table: TableInfo,
    changes: readonly Change[],
    pairs: readonly ReadPair[],
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
    await this.write(table, images);
    const matches = new Map<string, PairDecision>();
    // A key read that cannot go in front of a read runs alone, once for all who share it.
    const separate = new Map<string, Promise<Map<number, string>>>();
    const plans = pairs.map((pair) => planOf(table, pair));
    // Reads that differ only in their bound values (one role and filter, many `@user`s) run
    // as one statement: a branch each, so the statements do not grow with the users.
    const alike = new Map<string, Plan[]>();
    for (const plan of plans) {
      const shared = plan.mergeable ? plan.text : `\u0000${plan.pair.key}`;
      const same = alike.get(shared);
      if (same === undefined) alike.set(shared, [plan]);
      else same.push(plan);
    }
    for (const same of alike.values()) {
      if (same.length === 1) {
        const [plan] = same as [Plan];
        matches.set(plan.pair.key, await this.select(plan));
        continue;
      }
      const per = Math.max(1, (same[0] as Plan).params.length);
      const size = Math.max(1, Math.min(MAX_BRANCHES, Math.floor(MAX_PARAMETERS / per)));
      for (let from = 0; from < same.length; from += size) {
        const found = await this.selectMany(same.slice(from, from + size));
        for (const [index, plan] of same.slice(from, from + size).entries()) {
          matches.set(plan.pair.key, found[index] as PairDecision);
        }
      }
    }
    for (const plan of plans) {
      if (plan.keyCount !== null) continue;
      const keys = plan.pair.keys;
      let found = separate.get(keys.key);
      if (found === undefined) {
        found = this.selectAlone(keys.read);
        separate.set(keys.key, found);
      }
      const decision = matches.get(plan.pair.key) as PairDecision;
      matches.set(plan.pair.key, { rows: decision.rows, keys: await found });
    }
    return { images: numbers, matches };
  }

  /**
   * The images into the copy, the copy's last ones out first: as one multi-statement text when
   * they fit within max_allowed_packet, else in texts that each stay within it (a batch of big
   * rows in one would be refused, and the batch's events lost).
   */
  private async write(table: TableInfo, images: readonly Image[]): Promise<void> {
    const name = quoteIdent(table.name);
    let prefix = `DELETE FROM ${name} WHERE ${quoteIdent(IMAGE)} IS NOT NULL; `;
    const columns = table.columns.filter((column) => !column.generated);
    const list = [...columns.map((c) => quoteIdent(c.name)), quoteIdent(IMAGE)].join(', ');
    const tuple = `(${new Array(columns.length + 1).fill('?').join(', ')})`;
    const budget = this.packetBytes / 2;
    let values: unknown[] = [];
    let count = 0;
    let bytes = 0;
    const flush = async () => {
      if (count === 0) return;
      await this.connection.query(
        `${prefix}INSERT INTO ${name} (${list}) VALUES ${new Array(count).fill(tuple).join(', ')}`,
        values,
      );
      prefix = '';
      values = [];
      count = 0;
      bytes = 0;
    };
    for (const [number, image] of images.entries()) {
      const row = columns.map((column) => parameterOf(column, image.row[column.name]));
      const size = row.reduce((sum: number, value) => sum + textBytes(value), 16);
      if (count > 0 && bytes + size > budget) await flush();
      values.push(...row, number);
      count++;
      bytes += size;
    }
    await flush();
    if (prefix !== '') {
      await this.connection.query(prefix);
    }
  }

  /**
   * Reads of one SQL text and different bound values over the images, as one statement: each
   * read's own statement, unchanged, as a branch of a UNION ALL numbered by a first column.
   * Each branch is the very statement select() runs, so each decides exactly as it would.
   */
  private async selectMany(plans: readonly Plan[]): Promise<PairDecision[]> {
    const params: unknown[] = [];
    const branches = plans.map((plan, index) => {
      params.push(...plan.params);
      return `(SELECT ${index} AS ${quoteIdent(`${IMAGE}_read`)}, ${plan.text.slice('SELECT '.length)})`;
    });
    const [rows] = await this.connection.execute(branches.join(' UNION ALL '), bind(params));
    const found = plans.map((): PairDecision => ({ rows: new Map(), keys: new Map() }));
    for (const row of rows as unknown as unknown[][]) {
      const index = Number(row[0]);
      take(plans[index] as Plan, found[index] as PairDecision, row, 1);
    }
    return found;
  }

  /** One pair's statement over the images. */
  private async select(plan: Plan): Promise<PairDecision> {
    const [rows] = await this.connection.execute(plan.text, bind(plan.params));
    const found: PairDecision = { rows: new Map(), keys: new Map() };
    for (const row of rows as unknown as unknown[][]) take(plan, found, row, 0);
    return found;
  }

  /** A read over the images alone: by image number, its row JSON. */
  private async selectAlone(read: CompiledRead): Promise<Map<number, string>> {
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
    // Also after forget(): a copy left on the connection would be what `LIKE` copies (the old
    // columns, and the image column twice). Only a temporary table can be dropped here.
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

/** Reads in one statement at most (selectMany), and their bound values together at most. */
const MAX_BRANCHES = 64;
const MAX_PARAMETERS = 16_000;

/** The key read of a table without a key the caller may see (every event's key is `{}`). */
export const NO_KEY = 'none';

/**
 * A pair's statement over the images: the image number, the key read's columns, then the
 * read's own select list, FROM and WHERE unchanged. The key columns are the key read's very
 * select list over the same table, so each value is typed as that read would type it.
 */
interface Plan {
  readonly pair: ReadPair;
  readonly text: string;
  readonly params: readonly unknown[];
  /** How many key columns stand in front of the read's; null: the key read runs alone. */
  readonly keyCount: number | null;
  readonly mergeable: boolean;
}

function planOf(table: TableInfo, pair: ReadPair): Plan {
  const { sql, params } = pair.read.read.select;
  if (!sql.startsWith('SELECT ')) throw new Error('a feed read must be a plain SELECT');
  const front = keyColumnsOf(table, pair.keys);
  const list = front === null || front.text === '' ? '' : `${front.text}, `;
  return {
    pair,
    text: `SELECT ${quoteIdent(IMAGE)}, ${list}${sql.slice('SELECT '.length)}`,
    params,
    keyCount: front === null ? null : front.count,
    mergeable: mergeable(sql),
  };
}

/**
 * The select list of a key read that is `SELECT <list> FROM <the table>`, and its number of
 * columns; none for a table without a key the caller may see; null for any other key read
 * (it runs alone).
 */
function keyColumnsOf(table: TableInfo, keys: ReadGroup): { text: string; count: number } | null {
  if (keys.key === NO_KEY) return { text: '', count: 0 };
  const { sql, params } = keys.read.select;
  const from = ` FROM ${quoteIdent(table.name)}`;
  const fields = keys.read.fields;
  if (params.length > 0 || !sql.startsWith('SELECT ') || !sql.endsWith(from)) return null;
  if (fields.length === 0 || fields.some((field) => field.kind !== 'value')) return null;
  return { text: sql.slice('SELECT '.length, sql.length - from.length), count: fields.length };
}

/** One row of a pair's statement, its image number at `at`: its key and row JSON. */
function take(plan: Plan, found: PairDecision, row: readonly unknown[], at: number): void {
  const image = Number(row[at]);
  const count = plan.keyCount ?? 0;
  if (plan.keyCount !== null) {
    found.keys.set(image, plan.pair.keys.read.serialize(row.slice(at + 1, at + 1 + count)));
  }
  found.rows.set(image, plan.pair.read.read.serialize(row.slice(at + 1 + count)));
}

/**
 * Whether reads of this SQL may run as branches of one UNION ALL: a plain SELECT whose select
 * list binds no value (a UNION's column types are its branches' together: a bound value there
 * could type a column otherwise than its own statement would).
 */
function mergeable(sql: string): boolean {
  if (!sql.startsWith('SELECT ')) return false;
  const from = sql.indexOf(' FROM ');
  return from > 0 && !sql.slice(0, from).includes('?');
}

/** At most how long a parameter is as statement text (escaped text, binary as hex). */
function textBytes(value: unknown): number {
  if (typeof value === 'string') return 2 * Buffer.byteLength(value) + 3;
  if (Buffer.isBuffer(value)) return 2 * value.length + 3;
  return 32;
}

/** A decoded value as a statement parameter. */
function parameterOf(column: ColumnInfo, value: unknown): unknown {
  // The library gives a spatial value's coordinates without its SRID or exact type: none goes
  // in, and the feed sends no spatial column (http/changes.ts refuses one in $select).
  if (value === undefined || column.kind === 'geometry') return null;
  if (typeof value === 'bigint') return value.toString();
  // Not a codec's rule: a fix of what the binary log library decodes (negativeTime).
  if (column.dataType === 'time' && typeof value === 'string') return negativeTime(value);
  return value;
}

/** A TIME's hours, minutes and seconds as MySQL packs them (TIME2: 10, 6 and 6 bits). */
const packTime = (h: number, m: number, s: number) => h * 4096 + m * 64 + s;

/**
 * A negative TIME without a fraction (or a zero one) as @vlasky/zongji 0.9.0 decodes MySQL's
 * TIME2: it slices the flipped bits, one less than the magnitude, and adds the one to the
 * seconds without carrying it, so `-01:00:00` arrives as `-00:63:64` (which a TIME column
 * would take as 00:00:00). Adding the one to the packed bits instead gives the value back,
 * and leaves a value it decoded right as it is.
 */
export function negativeTime(text: string): string {
  const match = /^-(\d+):(\d\d):(\d\d)(\.0*)?$/.exec(text);
  if (match === null) return text;
  const packed = packTime(Number(match[1]), Number(match[2]), Number(match[3]) - 1) + 1;
  const hour = Math.floor(packed / 4096);
  const two = (n: number) => String(n).padStart(2, '0');
  return `-${two(hour)}:${two(Math.floor(packed / 64) % 64)}:${two(packed % 64)}${match[4] ?? ''}`;
}
