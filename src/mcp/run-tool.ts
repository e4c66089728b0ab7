/**
 * One MCP tool call, a front door beside REST (docs/mcp.md): a tool's arguments become the
 * Operation of the REST request of the same options, handle (pipeline/handle.ts) decides and runs
 * it as it does REST's, the answer is the REST answer's JSON, and an error is the REST error body
 * (`success`, `message`, `code`) as a tool result marked isError. Tables and actions a role may
 * not use are refused as REST refuses them (an unreadable table is unknown).
 */
import type { FastifyRequest } from 'fastify';
import type { RoutineInfo } from '../db/routines.js';
import type { TableInfo } from '../db/schema-types.js';
import { invalidBody } from '../errors.js';
import { READ_CACHE_MAX_QUERY_CHARS } from '../limits.js';
import type { Log } from '../log.js';
import { errorBody, failed, writtenText } from '../pipeline/answer.js';
import { may } from '../pipeline/decide.js';
import type { Handler } from '../pipeline/handle.js';
import { followable } from '../plan/view.js';
import type { Action } from '../policy/policy.js';
import { type Access, viewerFor } from '../policy/views.js';
import { keyValue, type WriteTarget } from '../query/key-value.js';
import { NO_PREFERENCES } from '../query/prefer.js';
import { parseWriteTarget } from '../query/write-query.js';
import type { Services } from '../services.js';
import type { ToolName } from './tools.js';

/** What a tool call runs with: the gateway's services, the application and the HTTP request. */
export interface ToolContext {
  readonly services: Services;
  readonly handler: Handler;
  readonly request: FastifyRequest;
  readonly maxRows: number;
  readonly log: Log;
}

/** A tools/call result: the answer's JSON as text, marked isError for an error body. */
export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError?: boolean;
}

type Args = Readonly<Record<string, unknown>>;

const ok = (text: string): ToolResult => ({ content: [{ type: 'text', text }] });

/** Runs a tool; every error becomes a result an agent can read. */
export async function runTool(
  context: ToolContext,
  name: ToolName,
  args: Args,
): Promise<ToolResult> {
  try {
    switch (name) {
      case 'list_tables':
        return ok(JSON.stringify(listTables(context)));
      case 'read_rows':
        return ok(await readRows(context, args));
      case 'aggregate_rows':
        return ok(await aggregateRows(context, args));
      case 'create_rows':
        return ok(await createRows(context, args));
      case 'update_rows':
        return ok(await changeRows(context, args, 'update'));
      case 'delete_rows':
        return ok(await changeRows(context, args, 'delete'));
      case 'call_routine':
        return ok(await callRoutine(context, args));
    }
  } catch (thrown) {
    const { error } = failed(thrown);
    if (error.status >= 500) context.log.error({ err: thrown, tool: name }, 'tool failed');
    return { content: [{ type: 'text', text: JSON.stringify(errorBody(error)) }], isError: true };
  }
}

function accessOf(context: ToolContext): Access | null {
  return context.request.access;
}

/** The tables and views the caller may use, with what it may see of each and do with it. */
export function listTables(context: ToolContext) {
  const access = accessOf(context);
  const viewer = viewerFor(access);
  const tables = [];
  for (const table of context.services.schema.all()) {
    const view = viewer(table);
    if (view === null) continue;
    const relations = [...table.relations.values()]
      .filter((relation) => followable(view, relation, viewer) !== null)
      .map((relation) => ({
        name: relation.name,
        target: relation.target.name,
        kind: relation.kind === 'one' ? 'to-one' : 'to-many',
      }));
    tables.push({
      name: table.name,
      kind: table.kind,
      primaryKey: table.primaryKey.filter((name) => view.column(name) !== undefined),
      columns: view.columns.map((column) => ({
        name: column.name,
        type: column.columnType,
        nullable: column.nullable,
        ...(column.generated ? { generated: true } : {}),
        ...(column.hasDefault ? { hasDefault: true } : {}),
      })),
      relations,
      actions: (['read', 'create', 'update', 'delete'] as const).filter((action) =>
        allowed(access, table, action),
      ),
    });
  }
  return { tables, routines: callableRoutines(context).map(describeRoutine) };
}

/** The stored procedures and functions the caller may call (every one served, without a policy). */
function callableRoutines(context: ToolContext): RoutineInfo[] {
  const access = accessOf(context);
  const { procedures, functions } = context.services.schema.routines;
  return [...procedures.values(), ...functions.values()].filter((routine) =>
    may(access, { kind: 'routine', routine: routine.name }),
  );
}

function describeRoutine(routine: RoutineInfo) {
  return {
    name: routine.name,
    kind: routine.kind,
    parameters: routine.parameters.map(({ name, mode, column }) => ({
      name,
      mode,
      type: column.columnType,
    })),
    ...(routine.returns === null ? {} : { returns: routine.returns.columnType }),
    ...(routine.comment === '' ? {} : { description: routine.comment }),
  };
}

/** Whether the caller may take the action on the table (pipeline/decide.ts). */
function allowed(access: Access | null, table: TableInfo, action: Action): boolean {
  return may(access, { kind: 'table', table: table.name, action });
}

/** The table a call names (handle decides whether the caller may use it). */
function tableArg(args: Args): string {
  return stringArg(args, 'table', true) as string;
}

function stringArg(args: Args, name: string, required = false): string | undefined {
  const value = args[name];
  if (value === undefined || value === null) {
    if (required) throw invalidBody(`The argument '${name}' is required`);
    return undefined;
  }
  if (typeof value !== 'string') throw invalidBody(`The argument '${name}' must be a string`);
  return value;
}

function countArg(args: Args, name: string): number | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw invalidBody(`The argument '${name}' must be a non-negative integer`);
  }
  return value as number;
}

/**
 * `read_rows`: the REST read of the same options, at most maxRows rows; with `count`, the
 * number the filter matches.
 */
function readRows(context: ToolContext, args: Args): Promise<string> {
  const count = args.count;
  if (count !== undefined && typeof count !== 'boolean') {
    throw invalidBody("The argument 'count' must be true or false");
  }
  return cappedRead(context, args, 'rows', {
    $select: stringArg(args, 'select'),
    $filter: stringArg(args, 'filter'),
    $orderby: stringArg(args, 'orderby'),
    $expand: stringArg(args, 'expand'),
    $count: count === true ? 'true' : undefined,
  });
}

/** `aggregate_rows`: the REST read with `$apply`, at most maxRows groups. */
function aggregateRows(context: ToolContext, args: Args): Promise<string> {
  return cappedRead(context, args, 'groups', {
    $apply: stringArg(args, 'apply', true),
    $filter: stringArg(args, 'filter'),
    $orderby: stringArg(args, 'orderby'),
  });
}

/**
 * The REST read of `options` (and `top`, `skip`) on the table `args` names, at most maxRows
 * rows: one more is asked for, to know whether more exist, and the answer then says how to read
 * on. `{"rows":[…],"count":n,"more":bool,"note":"…"}`.
 */
async function cappedRead(
  context: ToolContext,
  args: Args,
  unit: 'rows' | 'groups',
  options: Readonly<Record<string, string | undefined>>,
): Promise<string> {
  const table = tableArg(args);
  const { handler, request, maxRows } = context;
  // Read once the table is known: its 404 comes before an error in top or skip, as in REST.
  let window: Window = { top: undefined, skip: undefined, limit: maxRows };
  const made = handler.handle(
    {
      kind: 'read',
      table,
      request: () => {
        window = windowOf(args, maxRows);
        const query: Record<string, string> = {};
        for (const [option, value] of Object.entries(options))
          if (value !== undefined) query[option] = value;
        query.$top = String(window.limit + 1);
        if (window.skip !== undefined) query.$skip = String(window.skip);
        return { query, queryText: queryTextOf(query) };
      },
    },
    request.access,
    request,
  );
  const { read, total: counting } = await made;
  const total = counting === null ? null : await counting;
  const rows = await handler.fetch(read, request);
  const { top, skip, limit } = window;
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  let text = `{"rows":[${shown.map((row) => read.serialize(row)).join(',')}]`;
  if (total !== null) text += `,"count":${total}`;
  text += `,"more":${more}`;
  if (more) {
    const next = (skip ?? 0) + limit;
    const capped =
      top === undefined || top > maxRows
        ? `; at most ${maxRows} ${unit} are answered per call`
        : '';
    text += `,"note":${JSON.stringify(`More ${unit} exist: read the next ones with skip ${next}${capped}.`)}`;
  }
  return `${text}}`;
}

/** A capped read's `top` and `skip` as given, and the most rows it answers. */
interface Window {
  readonly top: number | undefined;
  readonly skip: number | undefined;
  readonly limit: number;
}

function windowOf(args: Args, maxRows: number): Window {
  const top = countArg(args, 'top');
  const skip = countArg(args, 'skip');
  return { top, skip, limit: Math.min(top ?? Number.POSITIVE_INFINITY, maxRows) };
}

/**
 * What the read caches key a tool's read by: its query object (its options in a fixed order, all
 * strings) as JSON after a NUL, which no HTTP request's query string holds, so no REST read
 * shares its entries; null past the cache's bound, as for REST (pipeline/read-cache.ts).
 */
function queryTextOf(query: Readonly<Record<string, string>>): string | null {
  const text = `\u0000${JSON.stringify(query)}`;
  return text.length > READ_CACHE_MAX_QUERY_CHARS ? null : text;
}

/** `create_rows`: the REST create of the same rows; the REST answer. */
async function createRows(context: ToolContext, args: Args): Promise<string> {
  const { handler, request } = context;
  const answer = await handler.handle(
    {
      kind: 'create',
      table: tableArg(args),
      request: () => {
        const rows = args.rows;
        if (rows === undefined) throw invalidBody("The argument 'rows' is required");
        return { body: rows, preferences: NO_PREFERENCES };
      },
    },
    request.access,
    request,
  );
  return writtenText(answer);
}

/**
 * The rows an update or delete changes: `key` and `value`, as REST's `update(<key>,<value>)`, or
 * `filter`, as REST's `update?$filter=…` — one of the two.
 */
function targetOf(args: Args, action: 'update' | 'delete'): WriteTarget {
  const key = stringArg(args, 'key');
  const value = stringArg(args, 'value');
  const filter = stringArg(args, 'filter');
  if (filter !== undefined) {
    if (key !== undefined || value !== undefined) {
      throw invalidBody(`${action}_rows takes either key and value, or filter; not both`);
    }
    return parseWriteTarget(action, null, { $filter: filter });
  }
  if (key === undefined || value === undefined) {
    throw invalidBody(`${action}_rows needs key and value, or filter`);
  }
  return { kind: 'key', match: keyValue(key, value) };
}

/** `update_rows` and `delete_rows`: the REST update and delete, by key or by filter. */
async function changeRows(
  context: ToolContext,
  args: Args,
  action: 'update' | 'delete',
): Promise<string> {
  const { handler, request } = context;
  const table = tableArg(args);
  const answer = await handler.handle(
    action === 'update'
      ? {
          kind: 'update',
          table,
          request: () => {
            const target = targetOf(args, action);
            const values = args.values;
            if (values === undefined) throw invalidBody("The argument 'values' is required");
            return { target, body: values, preferences: NO_PREFERENCES };
          },
        }
      : {
          kind: 'delete',
          table,
          request: () => ({ target: targetOf(args, action), preferences: NO_PREFERENCES }),
        },
    request.access,
    request,
  );
  return writtenText(answer);
}

/**
 * `call_routine`: the REST `POST /rpc/<name>` with `arguments` as its body: the procedure of that
 * name, else the function. A routine the role may not call is unknown, as in REST.
 */
async function callRoutine(context: ToolContext, args: Args): Promise<string> {
  const routine = stringArg(args, 'name', true) as string;
  const { handler, request } = context;
  const answer = await handler.handle(
    { kind: 'call', routine, request: () => ({ body: args.arguments ?? {} }) },
    request.access,
    request,
  );
  return answer.text;
}

/** The tools a table's write actions bring (reading one brings list_tables and the reads). */
const WRITE_TOOLS: readonly ToolName[] = ['create_rows', 'update_rows', 'delete_rows'];

/** The tools the caller's role may use: reading needs a readable table, writing the action. */
export function offered(context: ToolContext): ReadonlySet<ToolName> {
  const access = accessOf(context);
  const names = new Set<ToolName>();
  for (const table of context.services.schema.all()) {
    if (!allowed(access, table, 'read')) continue;
    names.add('list_tables').add('read_rows').add('aggregate_rows');
    if (allowed(access, table, 'create')) names.add('create_rows');
    if (allowed(access, table, 'update')) names.add('update_rows');
    if (allowed(access, table, 'delete')) names.add('delete_rows');
    // Every table tool is offered: the other tables cannot add one (a schema of 1,000 tables).
    if (WRITE_TOOLS.every((tool) => names.has(tool))) break;
  }
  if (callableRoutines(context).length > 0) names.add('list_tables').add('call_routine');
  return names;
}
