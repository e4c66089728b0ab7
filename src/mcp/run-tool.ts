/**
 * One MCP tool call, through the same pipelines, policy and execute stage as the REST routes
 * (docs/mcp.md): a tool's arguments become the REST request's options, the answer is the REST
 * answer's JSON, and an error is the REST error body (`success`, `message`, `code`) as a tool
 * result marked isError. Tables and actions a role may not use are refused as REST refuses
 * them (an unreadable table is unknown).
 */
import type { FastifyRequest } from 'fastify';
import { mapDbError } from '../db/errors.js';
import type { RoutineInfo } from '../db/routines.js';
import type { TableInfo } from '../db/schema-types.js';
import { ApiError, forbidden, invalidBody } from '../errors.js';
import type { Log } from '../log.js';
import { SUCCESS_MESSAGES } from '../messages.js';
import type { CompiledRead, ReadPipeline } from '../pipeline/read.js';
import { functionAnswer, functionJob, procedureAnswer, procedureJob } from '../pipeline/rpc.js';
import { createJob, deleteJob, type PlannedWrite, updateJob } from '../pipeline/write.js';
import { followable } from '../plan/view.js';
import type { Action } from '../policy/policy.js';
import { type Access, viewerFor } from '../policy/views.js';
import { keyValue, type WriteTarget } from '../query/key-value.js';
import type { QueryObject } from '../query/options.js';
import { parseWriteTarget } from '../query/write-query.js';
import type { Services } from '../services.js';
import type { ToolName } from './tools.js';

/** What a tool call runs with: the gateway's services, the read pipeline and the HTTP request. */
export interface ToolContext {
  readonly services: Services;
  readonly reads: ReadPipeline;
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
    const error = thrown instanceof ApiError ? thrown : mapDbError(thrown);
    if (error.status >= 500) context.log.error({ err: thrown, tool: name }, 'tool failed');
    const body = { success: false, message: error.message, code: error.code };
    return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
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
  return [...procedures.values(), ...functions.values()].filter(
    (routine) =>
      access === null ||
      access.policy.decide(access.role, { kind: 'routine', routine: routine.name }).allowed,
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

/** Whether the caller may take the action on the table (Policy.decide; everything without one). */
export function allowed(access: Access | null, table: TableInfo, action: Action): boolean {
  if (access === null) return true;
  return access.policy.decide(access.role, { kind: 'table', table: table.name, action }).allowed;
}

/**
 * The table a call names, when the caller may take the action on it: a table it may not read
 * is unknown (after the same schema re-read as one that does not exist), another action it may
 * not take is forbidden — as the REST policy gate answers.
 */
async function tableFor(context: ToolContext, args: Args, action: Action): Promise<TableInfo> {
  const name = stringArg(args, 'table', true) as string;
  const { schema } = context.services;
  const access = accessOf(context);
  if (access !== null) {
    const decision = access.policy.decide(access.role, { kind: 'table', table: name, action });
    // Its "did you mean" names only tables the role may read.
    const readable = access.policy.readableBy(access.role);
    if (!decision.allowed && decision.refusal === 'unknown-table') {
      return schema.refuse(name, readable);
    }
    const table = await Promise.resolve(schema.require(name)).catch((error: unknown) => {
      throw error instanceof ApiError && error.code === 'UNKNOWN_TABLE'
        ? schema.unknown(name, readable)
        : error;
    });
    if (!decision.allowed) throw forbidden();
    return table;
  }
  return schema.require(name);
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
  const table = await tableFor(context, args, 'read');
  const top = countArg(args, 'top');
  const limit = Math.min(top ?? Number.POSITIVE_INFINITY, context.maxRows);
  const query: Record<string, string> = {};
  for (const [option, value] of Object.entries(options))
    if (value !== undefined) query[option] = value;
  query.$top = String(limit + 1);
  const skip = countArg(args, 'skip');
  if (skip !== undefined) query.$skip = String(skip);
  const access = accessOf(context);
  const made = context.reads.read(table, urlOf(query), query, access);
  const read = context.reads.admit(made instanceof Promise ? await made : made, access);
  const { db } = context.services;
  const total = read.count === null ? null : await db.count(read.count, context.request);
  const rows = await arrays(context, read);
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  let text = `{"rows":[${shown.map((row) => read.serialize(row)).join(',')}]`;
  if (total !== null) text += `,"count":${total}`;
  text += `,"more":${more}`;
  if (more) {
    const next = (skip ?? 0) + limit;
    const capped =
      top === undefined || top > context.maxRows
        ? `; at most ${context.maxRows} ${unit} are answered per call`
        : '';
    text += `,"note":${JSON.stringify(`More ${unit} exist: read the next ones with skip ${next}${capped}.`)}`;
  }
  return `${text}}`;
}

/** The URL the read caches key a tool's read by (its options, in a fixed order). */
function urlOf(query: QueryObject): string {
  return `/mcp?${new URLSearchParams(query as Record<string, string>).toString()}`;
}

function arrays(context: ToolContext, read: CompiledRead): Promise<unknown[][]> {
  return new Promise((resolve, reject) => {
    context.services.db.arrays(
      read.select,
      (error, rows) => (error ? reject(error) : resolve(rows as unknown[][])),
      context.request,
    );
  });
}

/** `create_rows`: the REST create of the same rows; the REST answer. */
async function createRows(context: ToolContext, args: Args): Promise<string> {
  const table = await tableFor(context, args, 'create');
  const rows = args.rows;
  if (rows === undefined) throw invalidBody("The argument 'rows' is required");
  const planned = await jobFor(context, table, (t) => createJob(t, rows, accessOf(context)));
  const result = await context.services.db.write(planned.job, context.request);
  return JSON.stringify({
    success: true,
    message: SUCCESS_MESSAGES.inserted,
    insertId: result.insertId,
    affectedRows: result.affectedRows,
  });
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
  const table = await tableFor(context, args, action);
  const target = targetOf(args, action);
  const access = accessOf(context);
  let planned: PlannedWrite;
  if (action === 'update') {
    const values = args.values;
    if (values === undefined) throw invalidBody("The argument 'values' is required");
    planned = await jobFor(context, table, (t) => updateJob(t, target, values, access));
  } else {
    planned = await jobFor(context, table, (t) => deleteJob(t, target, access));
  }
  const result = await context.services.db.write(planned.job, context.request);
  return JSON.stringify({
    success: true,
    message: action === 'update' ? SUCCESS_MESSAGES.updated : SUCCESS_MESSAGES.deleted,
    affectedRows: result.affectedRows,
  });
}

/**
 * `call_routine`: the REST `POST /rpc/<name>` with `arguments` as its body: the procedure of that
 * name, else the function. A routine the role may not call is unknown, as in REST.
 */
async function callRoutine(context: ToolContext, args: Args): Promise<string> {
  const name = stringArg(args, 'name', true) as string;
  const given = args.arguments ?? {};
  const { schema, db, config } = context.services;
  const access = accessOf(context);
  // Its "did you mean" names only routines the role may call.
  if (
    access !== null &&
    !access.policy.decide(access.role, { kind: 'routine', routine: name }).allowed
  ) {
    return schema.refuseRoutine(name, access.policy.callableBy(access.role));
  }
  const found = await schema.requireRoutines(name, access?.policy.callableBy(access.role));
  const target = { database: config.db.database, flavour: db.flavour };
  return found.procedure === undefined
    ? functionAnswer(
        await db.call(functionJob(target, found.function, { body: given }), context.request),
      )
    : procedureAnswer(await db.call(procedureJob(target, found.procedure, given), context.request));
}

/** A write job, made again against a fresh schema when the arguments name something unknown. */
async function jobFor(
  context: ToolContext,
  table: TableInfo,
  make: (table: TableInfo) => PlannedWrite,
): Promise<PlannedWrite> {
  const made = context.services.schema.plan(table, make);
  return (made instanceof Promise ? await made : made).plan;
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
