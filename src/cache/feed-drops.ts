/**
 * The answer cache (answer-cache.ts) as the gateway runs it: made only when the change feed is
 * on (it is what drops answers), told of every transaction the feed's reader reads (its tables
 * dropped; a TRUNCATE drops its table, any other DDL everything) and of the binary-log
 * connection going and coming back (emptied both times, serving nothing in between); and what a
 * write through this gateway drops before its answer is sent (docs/caching.md).
 */
import { type Config, DEFAULTS } from '../config.js';
import type { SchemaCache } from '../db/schema.js';
import type { TableInfo } from '../db/schema-types.js';
import { AnswerCache } from './answer-cache.js';

const MIB = 1024 * 1024;

/**
 * What the cache asks of the change feed (changes/hub.ts ChangeFeed), a narrow type of its own:
 * changes/ reads through pipeline/, which drops this cache's answers, so cache/ is below both.
 */
export interface WatchedFeed {
  readonly status: { readonly on: boolean };
  readonly connected: boolean;
  watch(watcher: {
    transaction(transaction: {
      readonly changes: readonly { readonly op: string; readonly table: string | null }[];
    }): void;
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
  cache.live = feed.connected;
  feed.watch({
    transaction(transaction) {
      const tables = new Set<string>();
      for (const change of transaction.changes) {
        // A change of columns (or any other DDL the reader names) may change any answer.
        if (change.op === 'schema') {
          cache.flush();
          // Read in the new shape from now on (the cache empties again when the read finds the
          // schema changed: answer-cache.ts checks its version).
          schema.refresh().catch(() => {});
          return;
        }
        // Changes the reader could not decode, of tables it cannot name: any answer.
        if (change.table === null) {
          cache.flush();
          return;
        }
        tables.add(change.table);
      }
      if (tables.size > 0) cache.drop(tables);
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
    reached.delete(table);
    found = [...reached];
    this.memo.set(table, found);
    return found;
  }
}
