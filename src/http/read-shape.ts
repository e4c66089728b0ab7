/**
 * The read cache's second level (issue 17): compiled reads by the *shape* of the query, the
 * integer literals of its `$filter` taken out as holes, so `id eq 17` and `id eq 99123` share one
 * compiled read and only their parameters differ. A shape's template is what the pipeline itself
 * makes of a sentinel query (hole k replaced by the 15-digit number SENTINEL + k), with the
 * index of each hole's parameter; it is checked against the read of the request that made it and
 * serves only the very table object it was planned against. Only successful reads make templates,
 * and a shape whose sentinel query fails or whose template differs from that read is never
 * templated (until the table object changes), so every answer is the uncached pipeline's.
 */
import { createLRU } from 'lru.min';
import type { TableInfo } from '../db/schema-types.js';
import { READ_CACHE_MAX_QUERY_CHARS, READ_SHAPE_ENTRIES } from '../limits.js';
import { planRead, type ReadPlan } from '../plan/read-plan.js';
import type { Grant } from '../policy/policy.js';
import { type Access, guardRead, userIndependentReadGrant } from '../policy/stage.js';
import { isDigitRun, lex, type Token } from '../query/lexer.js';
import { parseReadOptions, type QueryObject } from '../query/options.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import {
  type CompiledRead,
  compileReadPlan,
  FNV_OFFSET,
  fnv1a,
  SecondSight,
} from './read-cache.js';

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
  /** The sentinel query's plan before the policy stage; null once the shape is not templatable. */
  plan: ReadPlan | null;
  /** For the plan as guardRead leaves it (no policy, or one that changes nothing). */
  own: Template | null;
  /** For the rewrites of grants that do not depend on the caller, as in read-cache.ts. */
  byGrant: WeakMap<Grant, Template> | null;
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

function instantiate({ read, selectAt, countAt }: Template, values: readonly number[]) {
  return {
    select: fill(read.select, selectAt, values),
    count: read.count === null || countAt === null ? null : fill(read.count, countAt, values),
    serialize: read.serialize,
    small: read.small,
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

export class ShapeCache {
  private readonly entries = createLRU<string, ShapeEntry>({ max: READ_SHAPE_ENTRIES });
  private readonly sight = new SecondSight(READ_SHAPE_ENTRIES);

  get size(): number {
    return this.entries.size;
  }

  /**
   * The shape of a query on a table, or null: no `$filter` string, no hole in it, a value that
   * is not a string (a repeated key), a marker character, or a key past the bound.
   */
  find(table: TableInfo, query: QueryObject): Shape | null {
    const filter = query.$filter;
    if (typeof filter !== 'string') return null;
    const holes = holesOf(filter);
    if (holes === null || holes.length === 0) return null;
    let key = `${table.name}\u0000`;
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

  /**
   * The compiled read of this request from its shape's template, or null (no template yet for
   * this caller's grant, or none can be: the request then goes the full path). guardRead runs on
   * the sentinel plan as it would on the request's own: it reads columns and the grant, never a
   * literal, so it refuses or rewrites both alike.
   */
  read(shape: Shape, access: Access | null): CompiledRead | null {
    const { entry } = shape;
    if (entry === undefined || entry.table !== shape.table || entry.plan === null) return null;
    const grant = access === null ? null : userIndependentReadGrant(access, shape.table);
    if (access !== null && grant === null) return null; // no read grant, or one naming @user
    const plan = guardRead(access, entry.plan);
    const template = plan === entry.plan ? entry.own : grant && (entry.byGrant?.get(grant) ?? null);
    return template === null ? null : instantiate(template, holeValues(shape));
  }

  /**
   * After the full path: `guarded` is the request's plan after the policy stage and `read` its
   * compiled read. On the shape's second sight its sentinel plan is made; then the template for
   * this caller's grant is made and kept if it gives exactly `read` for this request's holes.
   */
  learn(
    shape: Shape,
    query: QueryObject,
    guarded: ReadPlan,
    read: CompiledRead,
    access: Access | null,
  ): void {
    const { table } = guarded;
    let { entry } = shape;
    if (entry === undefined || entry.table !== table) {
      if (entry === undefined && !this.sight.seenBefore(fnv1a(shape.key, FNV_OFFSET))) return;
      entry = { table, plan: sentinelPlan(shape, query, table), own: null, byGrant: null };
      this.entries.set(shape.key, entry);
    }
    if (entry.plan === null) return;
    const grant = access === null ? null : userIndependentReadGrant(access, table);
    if (access !== null && grant === null) return;
    const made = templateOf(entry.plan, access, shape.holes.length / 2);
    if (
      made === null ||
      !sameColumns(made.plan, guarded) ||
      !sameRead(instantiate(made.template, holeValues(shape)), read)
    ) {
      entry.plan = null;
      entry.own = null;
      entry.byGrant = null;
    } else if (made.plan === entry.plan) {
      entry.own = made.template;
    } else if (grant !== null) {
      entry.byGrant ??= new WeakMap();
      entry.byGrant.set(grant, made.template);
    }
  }
}

/**
 * The plan of the query with hole k as SENTINEL + k, or null when that query is refused. A
 * sentinel is as long as the longest hole, so when its `$filter` is within the byte limit, the
 * `$filter` of every query of the shape is.
 */
function sentinelPlan(shape: Shape, query: QueryObject, table: TableInfo): ReadPlan | null {
  let filter = '';
  let at = 0;
  for (let k = 0; k < shape.holes.length; k += 2) {
    filter += `${shape.filter.slice(at, shape.holes[k])}${SENTINEL + k / 2}`;
    at = shape.holes[k + 1] as number;
  }
  filter += shape.filter.slice(at);
  try {
    // A spread keeps the keys' order, and `$filter` keeps its place.
    return planRead(parseReadOptions({ ...query, $filter: filter }), table);
  } catch {
    return null; // whatever the reason, this shape is not templated
  }
}

/** The sentinel plan after the policy stage, and its template; null if it cannot be one. */
function templateOf(
  sentinel: ReadPlan,
  access: Access | null,
  holes: number,
): { plan: ReadPlan; template: Template } | null {
  let plan: ReadPlan;
  let read: CompiledRead;
  try {
    plan = guardRead(access, sentinel);
    read = compileReadPlan(plan);
  } catch {
    return null;
  }
  const selectAt = holeIndexes(read.select, holes);
  const countAt = read.count === null ? null : holeIndexes(read.count, holes);
  if (selectAt === null || (read.count !== null && countAt === null)) return null;
  return { plan, template: { read, selectAt, countAt } };
}

/** The serializer is made of the table and the columns: the same ones make an equivalent one. */
function sameColumns(a: ReadPlan, b: ReadPlan): boolean {
  return (
    a.table === b.table &&
    a.columns.length === b.columns.length &&
    a.columns.every((column, i) => column === b.columns[i])
  );
}

function sameRead(a: CompiledRead, b: CompiledRead): boolean {
  return (
    sameQuery(a.select, b.select) &&
    (a.count === null ? b.count === null : b.count !== null && sameQuery(a.count, b.count)) &&
    a.small === b.small
  );
}
