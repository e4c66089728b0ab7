/**
 * Compiled reads by table, role and raw query string: a repeated `GET /table/<t>/read?…` skips
 * query parse → plan → compile, a few per cent of a small read's CPU. Exact because compileRead
 * (pipeline/read.ts) is a pure function of the query object, the table object and the role:
 * Fastify's query object is a pure function of the query string the router split off (the key),
 * a schema re-read makes new table objects, so an entry is used only for the very table object
 * it was made against (an older one is a miss, then replaced), and a policy's `@user` values are
 * bound per request. Only successful reads are kept: an invalid query is parsed and refused every
 * time, with the same error in the same order. A miss may still find the query's shape, its
 * `$filter` but for the integers (read-shape.ts).
 */
import { createLRU } from 'lru.min';
import type { TableInfo } from '../db/schema-types.js';
import {
  READ_CACHE_ENTRIES,
  READ_CACHE_MAX_QUERY_CHARS,
  READ_CACHE_SEEN_SLOTS,
} from '../limits.js';
import type { CompiledRead } from './compiled-read.js';

interface Entry {
  readonly table: TableInfo;
  readonly read: CompiledRead;
}

/**
 * The query string exactly as the router split it off `request.url` (find-my-way: after the
 * first `?` or `#`; the semicolon delimiter is off) and parsed it into `request.query`, or null
 * when the request is not cached: an absolute-form URL (the router strips a scheme and host
 * first), or a query string past READ_CACHE_MAX_QUERY_CHARS.
 */
export function rawQueryString(url: string): string | null {
  if (url.charCodeAt(0) !== 47) return null; // not '/'
  const question = url.indexOf('?');
  const hash = url.indexOf('#');
  const at = hash === -1 || (question !== -1 && question < hash) ? question : hash;
  if (at === -1) return '';
  return url.length - at - 1 > READ_CACHE_MAX_QUERY_CHARS ? null : url.slice(at + 1);
}

/** FNV-1a over the UTF-16 code units of `text`, continuing from `hash`. */
export function fnv1a(text: string, hash: number): number {
  let h = hash;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h;
}

export const FNV_OFFSET = 0x811c9dc5 | 0;

/** The cache key: the role, a NUL, the table name, a NUL, the query string. */
function keyOf(role: string, tableName: string, query: string): string {
  return `${role}\u0000${tableName}\u0000${query}`;
}

/** fnv1a of keyOf(role, tableName, query) without building it (a NUL only multiplies by the prime). */
function keyHash(role: string, tableName: string, query: string): number {
  const prime = 0x01000193;
  return fnv1a(
    query,
    Math.imul(fnv1a(tableName, Math.imul(fnv1a(role, FNV_OFFSET), prime)), prime),
  );
}

/**
 * Least recently used dropped first, READ_CACHE_ENTRIES in all whatever the number of tables.
 * A query string is kept on its second sight only. Every entry kept outlives a few young-
 * generation collections and, once pushed out, is old-generation garbage: kept on first sight,
 * a stream of point reads of random ids made V8 grow its heap by tens of MiB and spend more
 * CPU per request than planning afresh (bench/README.md, "Measurements behind the code"). The first sight leaves only a 32-bit hash in
 * a slot of READ_CACHE_SEEN_SLOTS (overwritten by the next miss landing there), so such a
 * stream keeps few of its query strings; a hash collision keeps one early, changing no answer.
 * Each slot also counts the entries kept whose hash falls in it (the LRU's eviction callback
 * takes them off): a lookup in a slot that counts none is a miss without building the key or
 * touching the LRU, which is what such a stream of point reads meets nearly every time.
 */
export class ReadCache {
  private readonly entries;
  private readonly sight: SecondSight;
  private readonly kept: Uint32Array;
  /** Every read ever kept: each answers one query string alone, whoever asks later. */
  private readonly everKept = new WeakSet<CompiledRead>();

  constructor(max: number = READ_CACHE_ENTRIES, seenSlots: number = READ_CACHE_SEEN_SLOTS) {
    this.sight = new SecondSight(seenSlots);
    this.kept = new Uint32Array(seenSlots);
    this.entries = createLRU<string, Entry>({
      max,
      // Called for an entry pushed out and for one replaced under the same key.
      onEviction: (key) => {
        const slot = this.sight.slotOf(fnv1a(key, FNV_OFFSET));
        this.kept[slot] = (this.kept[slot] ?? 1) - 1;
      },
    });
  }

  get size(): number {
    return this.entries.size;
  }

  /** The read of this query string for this role, if it was made against this very table object. */
  get(table: TableInfo, role: string, query: string): CompiledRead | undefined {
    if (this.kept[this.sight.slotOf(keyHash(role, table.name, query))] === 0) return undefined;
    const entry = this.entries.get(keyOf(role, table.name, query));
    return entry !== undefined && entry.table === table ? entry.read : undefined;
  }

  /**
   * Whether `read` was kept here: then it belongs to one query string (the same query object on
   * every request that brings it), which a read made afresh or from a shape is not — its object
   * is new each time. What is worked out once per query may be kept with such a read.
   */
  isKept(read: CompiledRead): boolean {
    return this.everKept.has(read);
  }

  /**
   * A successful read, made against `table`, kept when its query string was seen before for the
   * role (else it served its request alone).
   */
  add(table: TableInfo, role: string, query: string, read: CompiledRead): void {
    const hash = keyHash(role, table.name, query);
    if (!this.sight.seenBefore(hash)) return;
    this.entries.set(keyOf(role, table.name, query), { table, read });
    this.everKept.add(read);
    const slot = this.sight.slotOf(hash);
    this.kept[slot] = (this.kept[slot] ?? 0) + 1;
  }
}

/**
 * Which keys came before, by their 32-bit hash, one per slot (the next key landing in a slot
 * overwrites it): the read caches keep an entry on its second sight only (ReadCache says why).
 */
export class SecondSight {
  private readonly slots: Int32Array;

  constructor(slots: number) {
    this.slots = new Int32Array(slots);
  }

  slotOf(hash: number): number {
    return (hash >>> 0) % this.slots.length;
  }

  /** Whether `hash` was the last one seen in its slot; remembers it there either way. */
  seenBefore(hash: number): boolean {
    const slot = this.slotOf(hash);
    if (this.slots[slot] === hash) return true;
    this.slots[slot] = hash;
    return false;
  }
}
