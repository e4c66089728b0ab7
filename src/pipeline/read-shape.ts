/**
 * The read cache's second level: compiled reads by the *shape* of the query, the integer
 * literals of its `$filter` taken out as holes, so `id eq 17` and `id eq 99123` share one compiled
 * read and only their parameters differ. A shape's template is what the pipeline itself makes of
 * a sentinel query (hole k replaced by the 15-digit number SENTINEL + k), with the index of each
 * hole's parameter; it is checked against the read of the request that made it and serves only
 * the very table object and role it was made for. Only successful reads make templates, and a
 * shape whose sentinel query fails or whose template differs from that read is never templated
 * (until the table object changes), so every answer is the uncached pipeline's.
 */
import { createLRU } from 'lru.min';
import type { TableInfo } from '../db/schema-types.js';
import { READ_CACHE_MAX_QUERY_CHARS, READ_SHAPE_ENTRIES } from '../limits.js';
import { isDigitRun, lex, type Token } from '../query/lexer.js';
import type { QueryObject } from '../query/options.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { CompiledRead, ReadPage } from './compiled-read.js';
import { FNV_OFFSET, fnv1a, SecondSight } from './read-cache.js';

/** Longest hole: any run of 15 digits is a safe integer (compileNumber binds it as a number). */
const MAX_HOLE_DIGITS = 15;
/** Hole k's sentinel. With at most a few thousand holes (the key's bound) it keeps 15 digits. */
const SENTINEL = 917_364_528_190_000;

// The key: table name, NUL, then each query key and value followed by SEPARATOR, a hole as HOLE.
// A query holding any of the three has no shape (a table name cannot hold NUL in MySQL).
const SEPARATOR = '\u0001';
const HOLE = '\u0002';
const hasMarker = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) <= 2) return true;
  return false;
};

/**
 * The holes of `filter` as [start, end) index pairs, or null when it holds a key marker: the
 * `number` tokens the lexer reads (query/lexer.ts) that are runs of 1–15 ASCII digits. `-5`,
 * `1.5`, `1e3`, `2fa`, dates and times are other tokens, never holes. Lexing stops at the first
 * character no rule accepts, and so do the holes: such a filter is refused anyway.
 */
export function holesOf(filter: string): number[] | null {
  if (hasMarker(filter)) return null;
  const { tokens, starts, ends } = lex(filter);
  const holes: number[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k] as Token;
    if (token.kind === 'number' && token.text.length <= MAX_HOLE_DIGITS && isDigitRun(token.text)) {
      holes.push(starts[k] as number, ends[k] as number);
    }
  }
  return holes;
}

/** A compiled read with the parameter index of each hole, in each of its queries. */
interface Template {
  readonly read: CompiledRead;
  readonly selectAt: readonly number[];
  readonly countAt: readonly number[] | null;
}

interface ShapeEntry {
  readonly table: TableInfo;
  /** Null once the shape is known not to be templatable (for this table object). */
  template: Template | null;
}

/** A request's query as a shape: its key, its `$filter` and the holes in it, the entry found. */
export interface Shape {
  readonly table: TableInfo;
  readonly key: string;
  readonly filter: string;
  readonly holes: readonly number[];
  readonly entry: ShapeEntry | undefined;
}

/** The value compileNumber binds for hole k: a safe integer's text goes as Number(text). */
function holeValues(shape: Shape): number[] {
  const values: number[] = [];
  for (let k = 0; k < shape.holes.length; k += 2) {
    values.push(Number(shape.filter.slice(shape.holes[k], shape.holes[k + 1])));
  }
  return values;
}

function fill(query: CompiledQuery, at: readonly number[], values: readonly number[]) {
  const params = query.params.slice();
  for (let k = 0; k < at.length; k++) params[at[k] as number] = values[k];
  return { sql: query.sql, params };
}

function instantiate(
  { read, selectAt, countAt }: Template,
  values: readonly number[],
): CompiledRead {
  return {
    select: fill(read.select, selectAt, values),
    count: read.count === null || countAt === null ? null : fill(read.count, countAt, values),
    serialize: read.serialize,
    small: read.small,
    namesUser: read.namesUser,
    fields: read.fields,
    page: read.page,
    cost: read.cost,
    rows: read.rows,
    tables: read.tables ?? null,
  };
}

/** at[k]: the index of the one parameter that is sentinel k; null unless each is there once. */
function holeIndexes(query: CompiledQuery, holes: number): number[] | null {
  const at: number[] = new Array(holes).fill(-1);
  query.params.forEach((param, i) => {
    const k = typeof param === 'number' ? param - SENTINEL : -1;
    if (Number.isInteger(k) && k >= 0 && k < holes) at[k] = at[k] === -1 ? i : -2;
  });
  return at.every((i) => i >= 0) ? at : null;
}

const sameQuery = (a: CompiledQuery, b: CompiledQuery): boolean =>
  a.sql === b.sql &&
  a.params.length === b.params.length &&
  a.params.every((param, i) => Object.is(param, b.params[i]));

function sameRead(a: CompiledRead, b: CompiledRead): boolean {
  return (
    sameQuery(a.select, b.select) &&
    (a.count === null ? b.count === null : b.count !== null && sameQuery(a.count, b.count)) &&
    a.small === b.small &&
    a.serialize === b.serialize &&
    a.cost === b.cost &&
    samePage(a.page, b.page)
  );
}

function samePage(a: ReadPage | null, b: ReadPage | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.top === b.top &&
    a.skip === b.skip &&
    a.signature === b.signature &&
    (a.keys === null
      ? b.keys === null
      : b.keys !== null &&
        a.keys.length === b.keys.length &&
        a.keys.every((key, i) => key.slot === b.keys?.[i]?.slot))
  );
}

export class ShapeCache {
  private readonly entries = createLRU<string, ShapeEntry>({ max: READ_SHAPE_ENTRIES });
  private readonly sight = new SecondSight(READ_SHAPE_ENTRIES);

  get size(): number {
    return this.entries.size;
  }

  /**
   * The shape of a query on a table for a role, or null: no `$filter` string, no hole in it, a
   * value that is not a string (a repeated key), a marker character, or a key past the bound.
   */
  find(table: TableInfo, role: string, query: QueryObject): Shape | null {
    const filter = query.$filter;
    if (typeof filter !== 'string') return null;
    const holes = holesOf(filter);
    if (holes === null || holes.length === 0 || hasMarker(role)) return null;
    let key = `${role}\u0000${table.name}\u0000`;
    for (const name of Object.keys(query)) {
      const value = query[name];
      if (typeof value !== 'string' || hasMarker(name)) return null;
      if (name !== '$filter') {
        if (hasMarker(value)) return null;
        key += `${name}${SEPARATOR}${value}${SEPARATOR}`;
        continue;
      }
      key += `${name}${SEPARATOR}`;
      let at = 0;
      for (let k = 0; k < holes.length; k += 2) {
        key += `${filter.slice(at, holes[k])}${HOLE}`;
        at = holes[k + 1] as number;
      }
      key += `${filter.slice(at)}${SEPARATOR}`;
    }
    if (key.length > READ_CACHE_MAX_QUERY_CHARS) return null;
    return { table, key, filter, holes, entry: this.entries.get(key) };
  }

  /** The compiled read of this request from its shape's template, or null (none yet, or none can be). */
  read(shape: Shape): CompiledRead | null {
    const { entry } = shape;
    if (entry === undefined || entry.table !== shape.table || entry.template === null) return null;
    return instantiate(entry.template, holeValues(shape));
  }

  /**
   * After the full path: `read` is the request's compiled read, made against `table` by
   * `compile` (compileRead for this table and caller). On the shape's second sight the sentinel
   * query is compiled; its template is kept if it gives exactly `read` for this request's holes.
   */
  learn(
    shape: Shape,
    query: QueryObject,
    read: CompiledRead,
    compile: (query: QueryObject) => CompiledRead,
    table: TableInfo = shape.table,
  ): void {
    const { entry } = shape;
    if (entry !== undefined && entry.table === table) return; // decided for this table object
    if (entry === undefined && !this.sight.seenBefore(fnv1a(shape.key, FNV_OFFSET))) return;
    const template = templateOf(shape, query, compile);
    const exact = template !== null && sameRead(instantiate(template, holeValues(shape)), read);
    this.entries.set(shape.key, { table, template: exact ? template : null });
  }
}

/**
 * The template of the query with hole k as SENTINEL + k, or null when that query is refused or
 * a hole's parameter cannot be found. A sentinel is as long as the longest hole, so when its
 * `$filter` is within the byte limit, the `$filter` of every query of the shape is.
 */
function templateOf(
  shape: Shape,
  query: QueryObject,
  compile: (query: QueryObject) => CompiledRead,
): Template | null {
  let filter = '';
  let at = 0;
  for (let k = 0; k < shape.holes.length; k += 2) {
    filter += `${shape.filter.slice(at, shape.holes[k])}${SENTINEL + k / 2}`;
    at = shape.holes[k + 1] as number;
  }
  filter += shape.filter.slice(at);
  let read: CompiledRead;
  try {
    // A spread keeps the keys' order, and `$filter` keeps its place.
    read = compile({ ...query, $filter: filter });
  } catch {
    return null; // whatever the reason, this shape is not templated
  }
  const holes = shape.holes.length / 2;
  const selectAt = holeIndexes(read.select, holes);
  const countAt = read.count === null ? null : holeIndexes(read.count, holes);
  if (selectAt === null || (read.count !== null && countAt === null)) return null;
  return { read, selectAt, countAt };
}
