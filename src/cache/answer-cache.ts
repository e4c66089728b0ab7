/**
 * The exact server cache (docs/caching.md, "The server cache"): whole read answers, the very
 * bytes and headers sent, kept by what decides them (the role, the table, the representation,
 * the raw query string or key, and the caller's `@user` values when the read binds them) and
 * dropped by table when the change feed sees any change to a table the answer read, or when a
 * write through this gateway touches it. Never by time. An answer of one row by an integer key,
 * reading nothing but that row (`row`, read-tables.ts rowOf), is dropped by that row: a change
 * to another row of its table leaves it; a change of the table as a whole (TRUNCATE, a write the
 * feed cannot tell the rows of) drops it with the rest.
 *
 * Race safety: every drop stamps its tables with the next value of one clock. A read takes the
 * clock (a ticket) before its first statement; its answer is kept only when none of its tables
 * was stamped after the ticket, so an answer read before a change can never be stored after
 * that change's drop; a row's drop stamps the row (and its table, for the answers of many rows),
 * and a one-row answer is kept only when neither its row nor its whole table was stamped after
 * its ticket. Losing the binary-log connection (or the feed stopping) empties the cache
 * and moves the epoch, which fails every ticket taken before; until the connection is back
 * nothing is served or kept, and it is emptied once more when it is.
 *
 * Bounded by bytes, evicted by SIEVE (Zhang et al., NSDI '24): a hit marks its entry, and a hand
 * sweeping from the oldest entry spares each marked one once (clearing the mark) and takes the
 * first unmarked. As good as least-recently-used or better on the traces of
 * bench/cache-eviction.mjs, and a hit moves nothing: LRU's move to the end of the Map left a hole
 * at its old place that every eviction then stepped over from the start (bench/README.md).
 */
import type { UserValues } from '../sql/user-values.js';

/** What is kept of an answer: the bytes sent and the headers they need. */
export interface CachedAnswer {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
  /** `X-Total-Count` (`$count`), or null. */
  readonly total: string | null;
  /** The `Link` to the next page, or null. */
  readonly link: string | null;
}

interface Entry extends CachedAnswer {
  readonly key: string;
  readonly tables: readonly string[];
  readonly bytes: number;
  /** The one row it read (read-tables.ts rowOf), or null: dropped by any change to `tables`. */
  readonly row: string | null;
  /** Asked for since the hand last passed it (SIEVE). */
  visited: boolean;
}

/** A read's place in time for the cache: what `keep` checks. */
export interface Ticket {
  readonly clock: number;
  readonly epoch: number;
}

/** What the cache asks of its surroundings. */
export interface CacheSurroundings {
  /**
   * The tables whose rows change with a table's (foreign-key cascades): dropped with it; the
   * table itself among them when its foreign keys lead back to it.
   */
  readonly dependents: (table: string) => readonly string[];
  /** The schema's version (db/schema.ts): when it moves, everything is dropped. */
  readonly version: () => number;
}

const NOTHING_AROUND: CacheSurroundings = { dependents: () => [], version: () => 0 };

/** Bytes an entry costs besides its body and key: the object, the index sets, the Map slot. */
const ENTRY_OVERHEAD = 320;

/**
 * Rows stamped at most between two flushes: past it the row stamps are forgotten and every
 * one-row answer read before is refused instead (only a keep missed), so memory stays bounded
 * under a long stream of changes.
 */
const MAX_ROW_STAMPS = 65_536;

/** Which representation an answer is: a cache key part. */
export type AnswerForm = 'json' | 'csv';

/** The key of a read (`GET /table/<t>/read?…`) before its `@user` part. */
export function readKey(role: string, table: string, csv: boolean, query: string): string {
  return `r${csv ? 'c' : 'j'}\u0000${role}\u0000${table}\u0000${query}`;
}

/** The key of a key read (`GET /table/<t>/read(<k>,<v>)?…`) before its `@user` part. */
export function keyReadKey(
  role: string,
  table: string,
  csv: boolean,
  action: string,
  query: string,
): string {
  return `k${csv ? 'c' : 'j'}\u0000${role}\u0000${table}\u0000${action}\u0000${query}`;
}

/** The `@user` part of a key: the caller's values, unambiguously (JSON). */
export function userPart(user: UserValues | null): string {
  return user === null ? '\u0001' : `\u0001${JSON.stringify([user.id, user.email, user.role])}`;
}

export class AnswerCache {
  /** In the order kept: the oldest first. */
  private readonly entries = new Map<string, Entry>();
  /** SIEVE's hand: where the next eviction looks first (null: at the oldest). */
  private hand: Iterator<Entry> | null = null;
  /** The answers of each table that any change to it drops (all but one-row answers). */
  private readonly byTable = new Map<string, Set<Entry>>();
  /** One-row answers by their row, and by their table (for a drop of the whole table). */
  private readonly byRow = new Map<string, Set<Entry>>();
  private readonly rowsOf = new Map<string, Set<Entry>>();
  /** When each table last changed at all, on `clock`: what answers of many rows check. */
  private readonly stamps = new Map<string, number>();
  /** When each table was last dropped whole, and each row: what one-row answers check. */
  private readonly wholeStamps = new Map<string, number>();
  private readonly rowStamps = new Map<string, number>();
  /** One-row answers read before this are refused: the row stamps were forgotten then. */
  private rowFloor = 0;
  private clock = 0;
  private epoch = 0;
  private size = 0;
  /** Whether answers are served and kept: the feed's binary-log connection streams. */
  live = true;
  hits = 0;
  misses = 0;
  drops = 0;

  constructor(
    /** Bytes kept at most. */
    readonly maxBytes: number,
    /** The largest body kept. */
    readonly maxEntryBytes: number,
    private readonly around: CacheSurroundings = NOTHING_AROUND,
  ) {
    this.schemaVersion = around.version();
  }

  private schemaVersion: number;

  /** Everything dropped when the schema was read again and found changed. */
  private current(): void {
    const version = this.around.version();
    if (version !== this.schemaVersion) {
      this.schemaVersion = version;
      this.flush();
    }
  }

  get bytes(): number {
    return this.size;
  }

  get count(): number {
    return this.entries.size;
  }

  /**
   * The answer kept under `base` (a read that binds no `@user` value) or under `base` and the
   * caller's values; undefined when none or while the cache is not live.
   */
  get(base: string, user: UserValues | null): CachedAnswer | undefined {
    if (!this.live) return undefined;
    this.current();
    let entry = this.entries.get(base);
    if (entry === undefined) entry = this.entries.get(base + userPart(user));
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    entry.visited = true;
    this.hits++;
    return entry;
  }

  /** Taken before a read's first statement is sent. */
  ticket(): Ticket {
    this.current();
    return { clock: this.clock, epoch: this.epoch };
  }

  /**
   * Keeps an answer read under `ticket` when it is still current: the cache live, no table of
   * it dropped since, not past the entry bound. `namesUser`: the key takes the caller's values.
   * `row`: the answer is of that one row of `tables`' one table alone (read-tables.ts rowOf).
   */
  keep(
    ticket: Ticket,
    base: string,
    namesUser: boolean,
    user: UserValues | null,
    tables: readonly string[],
    answer: CachedAnswer,
    row: string | null = null,
  ): boolean {
    this.current();
    if (!this.live || ticket.epoch !== this.epoch) return false;
    if (answer.body.length > this.maxEntryBytes) return false;
    if (row !== null && tables.length !== 1) row = null;
    if (row !== null) {
      if (this.rowFloor > ticket.clock) return false;
      if ((this.rowStamps.get(row) ?? 0) > ticket.clock) return false;
      if ((this.wholeStamps.get(tables[0] as string) ?? 0) > ticket.clock) return false;
    } else {
      for (const table of tables) {
        if ((this.stamps.get(table) ?? 0) > ticket.clock) return false;
      }
    }
    const key = namesUser ? base + userPart(user) : base;
    const bytes = answer.body.length + key.length * 2 + ENTRY_OVERHEAD;
    if (bytes > this.maxBytes) return false;
    const old = this.entries.get(key);
    if (old !== undefined) this.remove(old);
    // A literal, not a spread: every entry of one shape, so a hit's mark is a plain store.
    const entry: Entry = {
      body: answer.body,
      type: answer.type,
      etag: answer.etag,
      total: answer.total,
      link: answer.link,
      key,
      tables,
      bytes,
      row,
      visited: false,
    };
    this.entries.set(key, entry);
    this.size += bytes;
    if (row !== null) {
      into(this.byRow, row, entry);
      into(this.rowsOf, tables[0] as string, entry);
    } else {
      for (const table of tables) into(this.byTable, table, entry);
    }
    // Out until it fits; never the entry just kept (it fits alone).
    while (this.size > this.maxBytes) {
      const victim = this.victim();
      if (victim !== entry) this.remove(victim);
    }
    return true;
  }

  /** SIEVE: the first entry from the hand on not asked for since the hand last passed it. */
  private victim(): Entry {
    for (;;) {
      // A Map's iterator goes on past deletions and sees entries added after it was made.
      this.hand ??= this.entries.values();
      const next = this.hand.next();
      if (next.done === true) {
        this.hand = null;
        continue;
      }
      if (!next.value.visited) return next.value;
      next.value.visited = false;
    }
  }

  /**
   * A change to `tables` (committed, or being answered to the writer): every answer that read
   * one of them, or a table their foreign keys cascade to, is dropped, and each is stamped so
   * no read that began before is kept.
   */
  drop(tables: Iterable<string>): void {
    const stamp = ++this.clock;
    const all = new Set<string>();
    for (const table of tables) {
      all.add(table);
      for (const dependent of this.around.dependents(table)) all.add(dependent);
    }
    for (const table of all) this.dropWhole(table, stamp);
  }

  /**
   * A change to these rows of `table` alone (read-tables.ts rowIdentity: each by an integer key
   * of the table, before and after the change), as the feed read it: the one-row answers of
   * those rows, every other answer of the table, and the tables its foreign keys cascade to.
   * One-row answers of its other rows stay.
   */
  dropRows(table: string, rows: Iterable<string>): void {
    const dependents = this.around.dependents(table);
    // A foreign key of the table to itself: the change may cascade to its other rows, unlogged.
    if (dependents.includes(table)) {
      this.drop([table]);
      return;
    }
    const stamp = ++this.clock;
    this.stamps.set(table, stamp);
    this.dropAll(this.byTable.get(table));
    for (const row of rows) {
      this.rowStamps.set(row, stamp);
      this.dropAll(this.byRow.get(row));
    }
    if (this.rowStamps.size > MAX_ROW_STAMPS) {
      this.rowStamps.clear();
      this.rowFloor = stamp;
    }
    for (const dependent of dependents) this.dropWhole(dependent, stamp);
  }

  private dropWhole(table: string, stamp: number): void {
    this.stamps.set(table, stamp);
    this.wholeStamps.set(table, stamp);
    this.dropAll(this.byTable.get(table));
    this.dropAll(this.rowsOf.get(table));
  }

  private dropAll(set: Set<Entry> | undefined): void {
    if (set === undefined) return;
    for (const entry of [...set]) {
      this.remove(entry);
      this.drops++;
    }
  }

  /** Everything dropped (a schema change, a routine call, the feed lost or back). */
  flush(): void {
    this.epoch++;
    this.clock++;
    this.drops += this.entries.size;
    this.entries.clear();
    this.hand = null;
    this.byTable.clear();
    this.byRow.clear();
    this.rowsOf.clear();
    // Every ticket is of an older epoch now: stamps before it can go.
    this.stamps.clear();
    this.wholeStamps.clear();
    this.rowStamps.clear();
    this.rowFloor = 0;
    this.size = 0;
  }

  /** The binary-log connection streams (true) or not: emptied either way. */
  setLive(live: boolean): void {
    this.live = live;
    this.flush();
  }

  private remove(entry: Entry): void {
    if (this.entries.get(entry.key) !== entry) return;
    this.entries.delete(entry.key);
    this.size -= entry.bytes;
    if (entry.row !== null) {
      out(this.byRow, entry.row, entry);
      out(this.rowsOf, entry.tables[0] as string, entry);
      return;
    }
    for (const table of entry.tables) out(this.byTable, table, entry);
  }
}

function into(index: Map<string, Set<Entry>>, name: string, entry: Entry): void {
  let set = index.get(name);
  if (set === undefined) {
    set = new Set();
    index.set(name, set);
  }
  set.add(entry);
}

function out(index: Map<string, Set<Entry>>, name: string, entry: Entry): void {
  const set = index.get(name);
  if (set === undefined) return;
  set.delete(entry);
  if (set.size === 0) index.delete(name);
}
