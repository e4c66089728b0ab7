/**
 * The answer cache (answer-cache.ts) as the gateway runs it: made only when the change feed is
 * on (it is what drops answers), told of every transaction the feed's reader reads (its rows
 * dropped where they are named by an integer key, else its tables; a TRUNCATE drops its table,
 * any other DDL everything) and of the binary-log
 * connection going and coming back (emptied both times, serving nothing in between); and what a
 * write through this gateway drops before its answer is sent (docs/caching.md).
 */
import { type Config, DEFAULTS } from '../config.js';
import type { SchemaCache } from '../db/schema.js';
import type { TableInfo } from '../db/schema-types.js';
import type { Change, Row } from '../row-change.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import { AnswerCache } from './answer-cache.js';
import { integerKeyText, rowIdentity } from './read-tables.js';

const MIB = 1024 * 1024;

/**
 * What the cache asks of the change feed (changes/hub.ts ChangeFeed), a narrow type of its own:
 * changes/ reads through pipeline/, which drops this cache's answers, so cache/ is below both.
 */
export interface WatchedFeed {
  readonly status: { readonly on: boolean };
  readonly connected: boolean;
  watch(watcher: {
    transaction(transaction: { readonly changes: readonly Change[] }): void;
    connection(connected: boolean): void;
  }): void;
}

/** The cache of `--cache`, or null: the feed off, or `--cache 0`. */
export function answerCacheOf(
  config: Config,
  feed: WatchedFeed | undefined,
  schema: SchemaCache,
): AnswerCache | null {
  if (feed === undefined || !feed.status.on) return null;
  const mib = config.cacheMiB ?? DEFAULTS.cacheMiB;
  if (mib === 0) return null;
  const cascades = new Cascades(schema);
  const cache = new AnswerCache(
    mib * MIB,
    (config.cacheMaxEntryKiB ?? DEFAULTS.cacheMaxEntryKiB) * 1024,
    { dependents: (table) => cascades.of(table), version: () => schema.version },
  );
  const keys = new IntegerKeys(schema);
  cache.live = feed.connected;
  feed.watch({
    transaction(transaction) {
      // Tables dropped whole, and the rows of the others (AnswerCache.dropRows).
      const whole = new Set<string>();
      const rows = new Map<string, Set<string>>();
      for (const change of transaction.changes) {
        // A change of columns (or any other DDL the reader names) may change any answer.
        if (change.op === 'schema') {
          cache.flush();
          // Read in the new shape from now on (the cache empties again when the read finds the
          // schema changed: answer-cache.ts checks its version).
          schema.refresh().catch(() => {});
          return;
        }
        const { table } = change;
        // Changes the reader could not decode, of tables it cannot name: any answer.
        if (table === null) {
          cache.flush();
          return;
        }
        if (whole.has(table)) continue;
        // TRUNCATE, or a row change whose rows cannot be named by an integer key: all of it.
        const named = 'before' in change ? keys.rowsOf(table, change) : null;
        if (named === null) {
          whole.add(table);
          rows.delete(table);
          continue;
        }
        let set = rows.get(table);
        if (set === undefined) {
          set = new Set();
          rows.set(table, set);
        }
        for (const row of named) set.add(row);
      }
      if (whole.size > 0) cache.drop(whole);
      for (const [table, named] of rows) cache.dropRows(table, named);
    },
    connection(connected) {
      cache.setLive(connected);
    },
  });
  return cache;
}

/**
 * What a committed write through this gateway drops, before its answer is sent: its table (and
 * what its foreign keys cascade to); everything when the table has triggers (or none are
 * known), whose statements may change any table.
 */
export function droppedByWrite(cache: AnswerCache, table: TableInfo): void {
  if (table.hasTriggers !== false) cache.flush();
  else cache.drop([table.name]);
}

/**
 * The tables whose rows a change to a table may change without the binary log saying so:
 * a foreign key's ON DELETE / ON UPDATE CASCADE or SET NULL is applied by the server, not
 * logged. Every table holding a foreign key to it, and theirs in turn (whatever the rule:
 * a RESTRICT one changes nothing, dropping its answers too is only a miss).
 */
class Cascades {
  private version = -1;
  private readonly memo = new Map<string, readonly string[]>();

  constructor(private readonly schema: SchemaCache) {}

  of(table: string): readonly string[] {
    if (this.version !== this.schema.version) {
      this.version = this.schema.version;
      this.memo.clear();
    }
    let found = this.memo.get(table);
    if (found !== undefined) return found;
    const byName = new Map<string, TableInfo>();
    for (const t of this.schema.all()) byName.set(t.name, t);
    const reached = new Set<string>();
    const queue = [table];
    for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
      for (const relation of byName.get(name)?.relations.values() ?? []) {
        // `many`: the other table holds the key to this one.
        if (relation.kind !== 'many' || reached.has(relation.target.name)) continue;
        reached.add(relation.target.name);
        queue.push(relation.target.name);
      }
    }
    // The table itself stays in when its keys lead back to it: a change to one row may then
    // change others, which dropping by row (AnswerCache.dropRows) must not miss.
    found = [...reached];
    this.memo.set(table, found);
    return found;
  }
}

/**
 * The rows a row change names by the keys one-row answers are kept by (read-tables.ts rowOf):
 * each integer column that alone is the primary key or a unique key, in the row before and
 * after the change (the binary log's FULL images hold every column). Null when the table is not
 * known or an image lacks such a column or holds no integer in it: the table is dropped whole.
 */
class IntegerKeys {
  private version = -1;
  private readonly memo = new Map<string, readonly string[] | null>();

  constructor(private readonly schema: SchemaCache) {}

  rowsOf(table: string, change: { before: Row | null; after: Row | null }): string[] | null {
    const columns = this.of(table);
    if (columns === null) return null;
    const rows: string[] = [];
    for (const image of [change.before, change.after]) {
      if (image === null) continue;
      for (const column of columns) {
        const value = image[column];
        if (value === undefined) return null;
        // A NULL key names no row a key read can read.
        if (value === null) continue;
        const text = integerKeyText(value);
        if (text === null) return null;
        rows.push(rowIdentity(table, column, text));
      }
    }
    return rows;
  }

  private of(name: string): readonly string[] | null {
    if (this.version !== this.schema.version) {
      this.version = this.schema.version;
      this.memo.clear();
    }
    if (this.memo.has(name)) return this.memo.get(name) ?? null;
    let found: readonly string[] | null = null;
    for (const table of this.schema.all()) {
      if (table.name !== name) continue;
      found = [table.primaryKey, ...table.uniqueKeys]
        .filter((key) => key.length === 1)
        .map((key) => key[0] as string)
        .filter((name) => {
          const column = table.columnsByName.get(name);
          return column !== undefined && COLUMN_KINDS[column.kind].rowImageKey;
        });
    }
    this.memo.set(name, found);
    return found;
  }
}
