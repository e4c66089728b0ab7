/**
 * A read as one function: query string → parse → plan (through the caller's views of the
 * schema: policy/views.ts) → compile → CompiledRead, everything a read needs besides the
 * database. A pure function of the query, the table object and the caller's role (a policy's
 * `@user` values are bound per request: sql/user-values.ts), so the caches (read-cache.ts,
 * read-shape.ts) can keep its results; ReadPipeline puts them together and owns the schema
 * re-read when a request names something the cached schema does not know.
 */
import {
  cachedRowSerializer,
  type Field,
  type RowSerializer,
  shapeSerializer,
} from '../db/rows.js';
import type { SchemaCache } from '../db/schema.js';
import type { TableInfo } from '../db/schema-types.js';
import type { Flavour } from '../execute/database.js';
import { planApply } from '../plan/apply.js';
import { planRead, type ReadPlan, type Selection, selectedColumns } from '../plan/read-plan.js';
import { isSmallRead } from '../plan/small-read.js';
import { type Access, viewerFor } from '../policy/views.js';
import { parseReadOptions, type QueryObject } from '../query/options.js';
import { compileCount, compileRead as compileSelect } from '../sql/compile-read.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { bindUser, namesUser } from '../sql/user-values.js';
import { compileApplyPlan } from './apply-read.js';
import { ReadCache, rawQueryString } from './read-cache.js';
import { ShapeCache } from './read-shape.js';

/** What a read needs besides the database. Shared by requests: nothing in it is ever changed. */
export interface CompiledRead {
  readonly select: CompiledQuery;
  /** The `$count` query, when the plan asks for it (the count itself is never kept). */
  readonly count: CompiledQuery | null;
  readonly serialize: RowSerializer;
  /** Fetched whole rather than streamed (plan/small-read.ts). */
  readonly small: boolean;
  /** Whether the queries hold a caller's `@user` value, put in per request (bindRead). */
  readonly namesUser: boolean;
}

/**
 * The plan's queries, serializer and path. compileCount and compileSelect compile the same
 * filter before anything else that could throw (quoting a name cannot), so either both throw the
 * same error or neither does: compiling both before the count runs refuses exactly what
 * compiling each just before its query did, and before any query is sent.
 */
export function compileReadPlan(plan: ReadPlan, flavour: Flavour = 'mariadb'): CompiledRead {
  const count = plan.count ? compileCount(plan, flavour) : null;
  const select = compileSelect(plan, flavour);
  return {
    select,
    count,
    serialize: serializerOf(plan),
    small: isSmallRead(plan),
    namesUser: namesUser(select.params) || (count !== null && namesUser(count.params)),
  };
}

/**
 * parse → plan → compile: the read `query` asks of `table`, as the caller's role sees it; with
 * `$apply`, its totals (apply-read.ts).
 */
export function compileRead(
  table: TableInfo,
  query: QueryObject,
  access: Access | null,
  flavour: Flavour = 'mariadb',
): CompiledRead {
  const request = parseReadOptions(query);
  const viewer = viewerFor(access);
  return request.apply === undefined
    ? compileReadPlan(planRead(request, table, viewer), flavour)
    : compileApplyPlan(planApply(request, table, viewer), flavour);
}

/** The read with the caller's `@user` values in place (the same object when it names none). */
export function bindRead(read: CompiledRead, access: Access | null): CompiledRead {
  if (!read.namesUser) return read;
  const user = access?.user ?? null;
  return {
    ...read,
    select: bindUser(read.select, user),
    count: read.count === null ? null : bindUser(read.count, user),
  };
}

const serializers = new WeakMap<readonly Selection[], RowSerializer>();

/**
 * The row serializer of a select list: for plain columns of the table, kept per table and column
 * names (two plans of the same `$select` share it: read-shape.ts compares reads by it); with
 * relations, per list.
 */
function serializerOf(plan: ReadPlan): RowSerializer {
  const { selections } = plan;
  if (selections.every((s) => s.kind === 'column' && s.expr.source === plan.source)) {
    return cachedRowSerializer(plan.source.table, selectedColumns(plan));
  }
  let serializer = serializers.get(selections);
  if (serializer === undefined) {
    serializer = shapeSerializer(fieldsOf(selections));
    serializers.set(selections, serializer);
  }
  return serializer;
}

/** The row shape of the selections: the order of the compiler's select list, slot by slot. */
function fieldsOf(selections: readonly Selection[]): Field[] {
  return selections.map((selection): Field => {
    if (selection.kind === 'column') {
      return { kind: 'value', name: selection.name, column: selection.expr.column };
    }
    if (selection.kind === 'one') {
      return { kind: 'object', name: selection.name, fields: fieldsOf(selection.selections) };
    }
    return { kind: 'array', name: selection.name, fields: fieldsOf(selection.plan.selections) };
  });
}

/**
 * Reads as the routes ask for them: a repeated query string skips parse → plan → compile
 * (ReadCache), and so does a query whose shape, its `$filter` but for the integers, came
 * before (ShapeCache). A request naming a column or relation the cached schema does not know
 * re-reads the schema (at most once a second) and is compiled again against the new table.
 */
export class ReadPipeline {
  private readonly cache = new ReadCache();
  private readonly shapes = new ShapeCache();

  constructor(
    private readonly schema: SchemaCache,
    private readonly flavour: Flavour,
  ) {}

  /** The read of `table` for a request: at once when cached, else a promise only on a re-read. */
  read(
    table: TableInfo,
    url: string,
    query: QueryObject,
    access: Access | null,
  ): CompiledRead | Promise<CompiledRead> {
    const role = access?.role ?? '';
    const raw = rawQueryString(url);
    const cached = raw === null ? undefined : this.cache.get(table, role, raw);
    if (cached !== undefined) return cached;
    // A miss may still find its shape: the same query but for $filter's integers.
    const shape = this.shapes.find(table, role, query);
    const templated = shape && this.shapes.read(shape);
    if (templated) return templated;
    const made = this.schema.plan(table, (t) => compileRead(t, query, access, this.flavour));
    const keep = ({ table: against, plan: read }: { table: TableInfo; plan: CompiledRead }) => {
      if (raw !== null) this.cache.add(against, role, raw, read);
      if (shape !== null) {
        this.shapes.learn(shape, query, read, (q) => compileRead(against, q, access, this.flavour));
      }
      return read;
    };
    return made instanceof Promise ? made.then(keep) : keep(made);
  }
}
