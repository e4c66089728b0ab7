/**
 * A read as one function: query string → parse → plan (through the caller's views of the
 * schema: policy/views.ts) → compile → CompiledRead, everything a read needs besides the
 * database. A pure function of the query, the table object and the caller's role (a policy's
 * `@user` values are bound per request: sql/user-values.ts), so the caches (read-cache.ts,
 * read-shape.ts) can keep its results; ReadPipeline puts them together and owns the schema
 * re-read when a request names something the cached schema does not know.
 */

import { rowOf, tablesOf } from '../cache/read-tables.js';
import type { SchemaCache } from '../db/schema.js';
import type { TableInfo } from '../db/schema-types.js';
import { badSkiptoken, invalidQuery, queryTooCostly } from '../errors.js';
import type { Flavour } from '../execute/database.js';
import { planApply } from '../plan/apply.js';
import { answerRows, readCost } from '../plan/read-cost.js';
import { planRead, type ReadPlan, type Selection, selectedColumns } from '../plan/read-plan.js';
import { isSmallRead } from '../plan/small-read.js';
import { isSingleColumnKey } from '../plan/unique-keys.js';
import { planKeyMatch } from '../plan/write-plan.js';
import { ANONYMOUS } from '../policy/policy.js';
import { type Access, readView, viewerFor } from '../policy/views.js';
import type { KeyValue } from '../query/key-value.js';
import { parseReadOptions, type QueryObject } from '../query/options.js';
import {
  compileCount,
  compileSelect,
  type PlainSelectText,
  pageKeySlots,
  plainSelectList,
} from '../sql/compile-read.js';
import { bindSeek, keyParameter } from '../sql/compile-seek.js';
import { compileKeyMatch } from '../sql/compile-write.js';
import { bindUser, namesUser } from '../sql/user-values.js';
import { type CsvFormulas, csvHeader, csvSerializer } from '../types/csv-rows.js';
import {
  cachedRowSerializer,
  type Field,
  type RowSerializer,
  shapeSerializer,
} from '../types/rows.js';
import { compileApplyPlan } from './apply-read.js';
import type { CompiledRead, ReadPage } from './compiled-read.js';
import { Memo } from './memo.js';
import { ReadCache } from './read-cache.js';
import { ShapeCache } from './read-shape.js';
import { bindingOf, type Position, type Skiptokens } from './skiptoken.js';

/**
 * The plan's queries, serializer and path. compileCount and compileSelect compile the same
 * filter before anything else that could throw (quoting a name cannot), so either both throw the
 * same error or neither does: compiling both before the count runs refuses exactly what
 * compiling each just before its query did, and before any query is sent.
 */
export function compileReadPlan(plan: ReadPlan, flavour: Flavour = 'mariadb'): CompiledRead {
  const count = plan.count ? compileCount(plan, flavour) : null;
  const select = compileSelect(plan, flavour, undefined, keptSelectText);
  return {
    select,
    count,
    serialize: readSerializer(plan),
    small: isSmallRead(plan),
    namesUser: namesUser(select.params) || (count !== null && namesUser(count.params)),
    fields: fieldsOf(plan.selections),
    page: pageOf(plan),
    cost: readCost(plan),
    rows: answerRows(plan),
    tables: tablesOf(plan),
  };
}

function pageOf(plan: ReadPlan): ReadPage | null {
  if (plan.page === null) return null;
  const keys = pageKeySlots(plan);
  const signature =
    keys === null
      ? 'count'
      : keys
          .map(({ key: { expr, direction } }) => {
            const { table } = expr.source;
            return `${table.name}.${expr.column.name} ${expr.column.columnType} ${direction}`;
          })
          .join(',');
  return { top: plan.top, skip: plan.skip ?? 0, keys, signature };
}

/**
 * The read of a continued page (a `$skiptoken`, compiled with its position as markers) with the
 * position's values in place: each sort key's value as its column's exact parameter, and the rows
 * to skip after it. A position that does not fit the read's keys is refused like a forged token.
 */
export function continueAt(read: CompiledRead, position: Position): CompiledRead {
  const page = read.page;
  if (page === null) throw badSkiptoken();
  const keys = page.keys ?? [];
  const after = position.after ?? [];
  if ((page.keys === null) !== (position.after === null) || keys.length !== after.length) {
    throw badSkiptoken();
  }
  const values = keys.map(({ key }, i) => {
    const value = keyParameter(key.expr.column, after[i] ?? null);
    if (value === undefined) throw badSkiptoken();
    return value;
  });
  return {
    ...read,
    select: bindSeek(read.select, values, position.skip),
    page: { ...page, skip: position.skip },
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

/**
 * The highest cost estimate a read may have (plan/read-cost.ts, docs/reading.md): `limit` for
 * every caller but the `anonymous` role, which has `anonymous`; 0 is no limit.
 */
export interface ReadBudget {
  readonly limit: number;
  readonly anonymous: number;
}

export const NO_BUDGET: ReadBudget = { limit: 0, anonymous: 0 };

/**
 * The read, refused with QUERY_TOO_COSTLY when its estimate is past the caller's budget: one
 * comparison per request, the estimate being kept with the compiled read. Checked before the
 * read's first statement (its `$count` too) is sent.
 */
export function withinBudget(
  read: CompiledRead,
  access: Access | null,
  budget: ReadBudget,
): CompiledRead {
  const anonymous = access?.role === ANONYMOUS;
  const limit = anonymous ? budget.anonymous : budget.limit;
  if (limit !== 0 && read.cost > limit) {
    throw queryTooCostly(
      read.cost,
      limit,
      anonymous ? '--max-read-cost-anonymous' : '--max-read-cost',
    );
  }
  return read;
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

/**
 * A plain select list's text per list and flavour (memo.ts): a read without `$select` compiles
 * its view's `*` (plan/view.ts), the same list every time, so its text is made once per schema.
 */
const plainTexts: Readonly<Record<Flavour, Memo<readonly Selection[], string>>> = {
  mariadb: new Memo((selections) => plainSelectList(selections, 'mariadb')),
  mysql: new Memo((selections) => plainSelectList(selections, 'mysql')),
};

/** plainSelectList through the memo above: what the pipeline's compiles pass compileSelect. */
export const keptSelectText: PlainSelectText = (selections, flavour) =>
  plainTexts[flavour].of(selections);

/** A select list with relations: its row serializer (memo.ts). */
const serializers = new Memo<readonly Selection[], RowSerializer>((selections) =>
  shapeSerializer(fieldsOf(selections)),
);

/**
 * The row serializer of a select list: for plain columns of the table, kept per table and column
 * names (two plans of the same `$select` share it: read-shape.ts compares reads by it); with
 * relations, per list.
 */
export function readSerializer(plan: ReadPlan): RowSerializer {
  const { selections } = plan;
  if (selections.every((s) => s.kind === 'column' && s.expr.source === plan.source)) {
    return cachedRowSerializer(plan.source.table, selectedColumns(plan));
  }
  return serializers.of(selections);
}

/**
 * The row shape of the selections: the order of the compiler's select list, slot by slot. Kept
 * per list, so that a read without `$select` has the same fields every time (csvOf keeps by them).
 */
const fieldLists = new Memo<readonly Selection[], readonly Field[]>(fieldsMade);

export function fieldsOf(selections: readonly Selection[]): readonly Field[] {
  return fieldLists.of(selections);
}

function fieldsMade(selections: readonly Selection[]): Field[] {
  return selections.map((selection): Field => {
    if (selection.kind === 'column') {
      return { kind: 'value', name: selection.name, column: selection.expr.column };
    }
    if (selection.kind === 'one') {
      return { kind: 'object', name: selection.name, fields: fieldsMade(selection.selections) };
    }
    return { kind: 'array', name: selection.name, fields: fieldsMade(selection.plan.selections) };
  });
}

/**
 * A read's rows as CSV: its header record, and one record a row, each record starting with the
 * CRLF that ends the one before it (http/csv-rows.ts ends the last).
 */
export interface CsvRead {
  readonly header: string;
  readonly serialize: RowSerializer;
}

function csvMade(fields: readonly Field[], formulas: CsvFormulas): CsvRead {
  const record = csvSerializer(fields, formulas);
  return { header: csvHeader(fields), serialize: (row) => `\r\n${record(row)}` };
}

const csvReads: Record<CsvFormulas, Memo<readonly Field[], CsvRead>> = {
  escape: new Memo((fields) => csvMade(fields, 'escape')),
  keep: new Memo((fields) => csvMade(fields, 'keep')),
};

/** The CSV shape of a read (types/csv-rows.ts), made once per select list and `--csv-formulas`. */
export function csvOf(read: CompiledRead, formulas: CsvFormulas = 'escape'): CsvRead {
  return csvReads[formulas].of(read.fields);
}

/**
 * `read(<key>,<value>)`: the one row whose key column — its primary key or a unique key, alone
 * (plan/unique-keys.ts) — holds the value, as the read `query` asks for it: `$select` and
 * `$expand` apply, other options are refused (one row has no order, page or count). The key
 * is resolved as update's is (plan/write-plan.ts planKeyMatch), among the columns the caller
 * may read; the row must be one the caller may read.
 */
export function compileKeyRead(
  table: TableInfo,
  key: KeyValue,
  query: QueryObject,
  access: Access | null,
  flavour: Flavour = 'mariadb',
): CompiledRead {
  const request = parseReadOptions(query);
  const other =
    request.filter !== null
      ? '$filter'
      : request.orderBy.length > 0
        ? '$orderby'
        : request.top !== null
          ? '$top'
          : request.skip !== null
            ? '$skip'
            : request.count
              ? '$count'
              : request.continues
                ? '$skiptoken'
                : null;
  if (other !== null) {
    throw invalidQuery(
      `read(<key>,<value>) reads one row and takes $select and $expand only, not ${other}`,
    );
  }
  const match = planKeyMatch(readView(access, table), key);
  if (!isSingleColumnKey(table, match.column.name)) {
    throw invalidQuery(
      `Column '${match.column.name}' is not the primary key or a unique key of '${table.name}' on its own, so read(<key>,<value>) could find many rows: read them with $filter=…`,
    );
  }
  if (match.kind === 'isNull') {
    throw invalidQuery(
      `read(${match.column.name},null) matches no row by a key (a unique key may hold NULL in many rows): read them with $filter=${match.column.name} eq null`,
    );
  }
  const plan = planRead(request, table, viewerFor(access));
  const select = compileSelect(
    plan,
    flavour,
    (column, params) => compileKeyMatch(match, params, column),
    keptSelectText,
  );
  return {
    select,
    count: null,
    serialize: readSerializer(plan),
    small: true,
    namesUser: namesUser(select.params),
    fields: fieldsOf(plan.selections),
    page: null,
    cost: readCost(plan, true),
    rows: answerRows(plan, true),
    tables: tablesOf(plan),
    row: rowOf(plan, table, match.column, match.value),
  };
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
    private readonly tokens: Skiptokens,
    private readonly budget: ReadBudget = NO_BUDGET,
  ) {}

  /**
   * The read as the caller runs it: refused when past the caller's budget (withinBudget), its
   * `@user` values in place (bindRead). Every read route and tool runs its read through this.
   */
  admit(read: CompiledRead, access: Access | null): CompiledRead {
    return bindRead(withinBudget(read, access, this.budget), access);
  }

  /** Whether `read` belongs to one query string alone (ReadCache.isKept). */
  isKept(read: CompiledRead): boolean {
    return this.cache.isKept(read);
  }

  /**
   * The read of `table` for a query object, keyed in the caches by `queryText`, the text it was
   * parsed from (null: not cached): at once when cached, else a promise only on a re-read.
   * A `$skiptoken` read is compiled and kept as its query with an empty token, so every token of
   * one query shares one compiled read, and the token's position is bound in as parameters.
   */
  read(
    table: TableInfo,
    queryText: string | null,
    query: QueryObject,
    access: Access | null,
  ): CompiledRead | Promise<CompiledRead> {
    const token = query.$skiptoken;
    // A repeated `$skiptoken` (an array) is refused by the parse, as any repeated option.
    if (typeof token !== 'string') return this.compiled(table, queryText, query, access);
    const made = this.compiled(
      table,
      withoutToken(queryText),
      { ...query, $skiptoken: '' },
      access,
    );
    const bind = (read: CompiledRead): CompiledRead => {
      const binding = bindingOf(table.name, query, read.page?.signature ?? '');
      return continueAt(read, this.tokens.open(binding, token));
    };
    // A cached plan binds its token at once: a `$skiptoken` page is a read's fast path too.
    return made instanceof Promise ? made.then(bind) : bind(made);
  }

  private compiled(
    table: TableInfo,
    raw: string | null,
    query: QueryObject,
    access: Access | null,
  ): CompiledRead | Promise<CompiledRead> {
    const role = access?.role ?? '';
    const cached = raw === null ? undefined : this.cache.get(table, role, raw);
    if (cached !== undefined) return cached;
    // A miss may still find its shape: the same query but for $filter's integers.
    const shape = this.shapes.find(table, role, query);
    // Every read is kept by its query string (on its second sight), one made from its shape
    // too: a query repeated word for word then skips the shape's lexing and instantiation.
    const keep = ({ table: against, plan: read }: { table: TableInfo; plan: CompiledRead }) => {
      if (raw !== null) this.cache.add(against, role, raw, read);
      if (shape !== null) {
        this.shapes.learn(shape, query, read, (q) => compileRead(against, q, access, this.flavour));
      }
      return read;
    };
    const templated = shape && this.shapes.read(shape);
    // Its shape's learn() returns at once: the template it came from is this table's.
    if (templated) return keep({ table, plan: templated });
    const made = this.schema.plan(table, (t) => compileRead(t, query, access, this.flavour));
    // Planned at once unless the plan asks for a schema re-read (a read's fast path stays sync).
    return made instanceof Promise ? made.then(keep) : keep(made);
  }
}

/** How a `$skiptoken` key may be written in a raw query string; other spellings go uncached. */
const TOKEN_KEYS = ['$skiptoken=', '%24skiptoken='];

/**
 * The raw query string with the `$skiptoken` value left out (the cache key of every token of the
 * query), or null when the key is not found as written in TOKEN_KEYS.
 */
export function withoutToken(raw: string | null): string | null {
  if (raw === null) return null;
  for (const key of TOKEN_KEYS) {
    let at = raw.startsWith(key) ? 0 : raw.indexOf(`&${key}`);
    if (at === -1) continue;
    if (at > 0) at += 1;
    const end = raw.indexOf('&', at);
    return raw.slice(0, at + key.length) + (end === -1 ? '' : raw.slice(end));
  }
  return null;
}

export type { CompiledRead } from './compiled-read.js';
