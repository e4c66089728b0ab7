/**
 * Compiled reads by table and raw query string (issue 17): a repeated `GET /table/<t>/read?…`
 * skips query parse → plan → compile, 3–8 µs of a ~110 µs request. Exact because each of those
 * stages is a pure function of the query object and the table object: Fastify's query object is
 * a pure function of the query string the router split off (the key), and a schema re-read makes
 * new table objects, so an entry is used only for the very table object its plan was made
 * against (an older one is a miss, then replaced). Only successful plans are kept: an invalid
 * query is parsed and refused every time, with the same error in the same order. A miss may
 * still find the query's shape, its `$filter` but for the integers (read-shape.ts).
 */
import { createLRU } from 'lru.min';
import { cachedRowSerializer, type RowSerializer } from '../db/rows.js';
import type { TableInfo } from '../db/schema-types.js';
import {
  READ_CACHE_ENTRIES,
  READ_CACHE_MAX_QUERY_CHARS,
  READ_CACHE_SEEN_SLOTS,
} from '../limits.js';
import type { ReadPlan } from '../plan/read-plan.js';
import { isSmallRead } from '../plan/small-read.js';
import type { Grant } from '../policy/policy.js';
import { type Access, userIndependentReadGrant } from '../policy/stage.js';
import { compileCount, compileRead } from '../sql/compile-read.js';
import type { CompiledQuery } from '../sql/compiled-query.js';

/** What a read needs besides the database. Shared by requests: nothing in it is ever changed. */
export interface CompiledRead {
  readonly select: CompiledQuery;
  /** The `$count` query, when the plan asks for it (the count itself is never kept). */
  readonly count: CompiledQuery | null;
  readonly serialize: RowSerializer;
  /** Fetched whole rather than streamed (plan/small-read.ts). */
  readonly small: boolean;
}

/**
 * The plan's queries, serializer and path. compileCount and compileRead compile the same filter
 * before anything else that could throw (quoting a name cannot), so either both throw the same
 * error or neither does: compiling both before the count runs refuses exactly what compiling
 * each just before its query did, and before any query is sent.
 */
export function compileReadPlan(plan: ReadPlan): CompiledRead {
  const count = plan.count ? compileCount(plan) : null;
  return {
    select: compileRead(plan),
    count,
    serialize: cachedRowSerializer(plan.table, plan.columns),
    small: isSmallRead(plan),
  };
}

export interface CachedRead {
  /** The plan before the policy stage (which runs on every request). */
  readonly plan: ReadPlan;
  /** Compiled on first use without a policy rewrite. */
  compiled: CompiledRead | null;
  /** The compiled rewrites of grants that do not depend on the caller, by grant. */
  byGrant: WeakMap<Grant, CompiledRead> | null;
}

/**
 * The compiled read of `plan`, which guardRead made of the entry's plan for this caller. Kept with
 * the entry when it is the entry's own plan (no policy, or one that left the plan as it was), or
 * per grant when the grant's rewrite depends on nothing but the grant and the plan (no `@user`:
 * policy/stage.ts userIndependentReadGrant), so every such rewrite compiles to the same query.
 * A rewrite that may name the caller is compiled for this request alone.
 */
export function compiledRead(
  entry: CachedRead,
  plan: ReadPlan,
  access: Access | null,
): CompiledRead {
  if (plan === entry.plan) {
    entry.compiled ??= compileReadPlan(plan);
    return entry.compiled;
  }
  const grant = access === null ? null : userIndependentReadGrant(access, plan.table);
  if (grant === null) return compileReadPlan(plan);
  entry.byGrant ??= new WeakMap();
  let read = entry.byGrant.get(grant);
  if (read === undefined) {
    read = compileReadPlan(plan);
    entry.byGrant.set(grant, read);
  }
  return read;
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

/** The cache key: the table name, a NUL, the query string. */
function keyOf(tableName: string, query: string): string {
  return `${tableName}\u0000${query}`;
}

/** fnv1a of keyOf(tableName, query) without building it (a NUL only multiplies by the prime). */
function keyHash(tableName: string, query: string): number {
  return fnv1a(query, Math.imul(fnv1a(tableName, FNV_OFFSET), 0x01000193));
}

/**
 * Least recently used dropped first, READ_CACHE_ENTRIES in all whatever the number of tables.
 * A query string is kept on its second sight only. Every entry kept outlives a few young-
 * generation collections and, once pushed out, is old-generation garbage: kept on first sight,
 * a stream of point reads of random ids (100,000 of them) made V8 grow its heap by ~35 MiB and
 * spend more CPU per request than planning afresh. The first sight leaves only a 32-bit hash in
 * a slot of READ_CACHE_SEEN_SLOTS (overwritten by the next miss landing there), so such a
 * stream keeps ~1 % of its query strings; a hash collision keeps one early, changing no answer.
 * Each slot also counts the entries kept whose hash falls in it (the LRU's eviction callback
 * takes them off): a lookup in a slot that counts none is a miss without building the key or
 * touching the LRU, which is what such a stream of point reads meets nearly every time.
 */
export class ReadCache {
  private readonly entries;
  private readonly sight: SecondSight;
  private readonly kept: Uint32Array;

  constructor(max: number = READ_CACHE_ENTRIES, seenSlots: number = READ_CACHE_SEEN_SLOTS) {
    this.sight = new SecondSight(seenSlots);
    this.kept = new Uint32Array(seenSlots);
    this.entries = createLRU<string, CachedRead>({
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

  /** The entry for this query string, if its plan was made against this very table object. */
  get(table: TableInfo, query: string): CachedRead | undefined {
    if (this.kept[this.sight.slotOf(keyHash(table.name, query))] === 0) return undefined;
    const entry = this.entries.get(keyOf(table.name, query));
    return entry !== undefined && entry.plan.table === table ? entry : undefined;
  }

  /**
   * The entry for a successful plan, kept under the table object it was made against when its
   * query string was seen before (else it serves this request alone).
   */
  add(query: string, plan: ReadPlan): CachedRead {
    const entry: CachedRead = { plan, compiled: null, byGrant: null };
    const hash = keyHash(plan.table.name, query);
    if (this.sight.seenBefore(hash)) {
      this.entries.set(keyOf(plan.table.name, query), entry);
      const slot = this.sight.slotOf(hash);
      this.kept[slot] = (this.kept[slot] ?? 0) + 1;
    }
    return entry;
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
