/**
 * `POST /table/<t>/create`, `PUT /table/<t>/update(<key>,<value>)` or `update?$filter=…` and
 * `DELETE /table/<t>/delete(<key>,<value>)` or `delete?$filter=…`: route → action
 * (query/key-value, query/write-query) and preferences (query/prefer) → the write pipeline
 * (pipeline/write.ts: a job) → execute → `{ success, message, … }`, with `Preference-Applied`
 * naming what was honoured (docs/writes.md). find-my-way cannot match parentheses in a pattern,
 * so the last segment is a parameter and key-value.ts reads it; an unknown action is a 404.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import type { TableInfo } from '../db/schema-types.js';
import { unsupportedMediaType } from '../errors.js';
import type { WriteResult } from '../execute/write.js';
import { SUCCESS_MESSAGES } from '../messages.js';
import { createJob, deleteJob, type PlannedWrite, updateJob } from '../pipeline/write.js';
import { parseWriteAction, type WriteAction } from '../query/key-value.js';
import type { QueryObject } from '../query/options.js';
import { appliedPreferences, type Preferences, parsePrefer } from '../query/prefer.js';
import { parseWriteTarget } from '../query/write-query.js';
import type { Services } from '../services.js';
import { actionRefusal } from './allowed-methods.js';
import { JSON_TYPE } from './json-rows.js';
import { gated } from './route-gate.js';

/**
 * The success answers, `{ success, message, … }`, as JSON text with the numbers appended: the
 * bytes JSON.stringify gave for the object (same keys, same order), without a serializer per
 * request (hot path). The counts are integers and the insert id is a number, digits or null.
 */
const INSERTED = `{"success":true,"message":${JSON.stringify(SUCCESS_MESSAGES.inserted)},"insertId":`;
const UPDATED = `{"success":true,"message":${JSON.stringify(SUCCESS_MESSAGES.updated)},"affectedRows":`;
const DELETED = `{"success":true,"message":${JSON.stringify(SUCCESS_MESSAGES.deleted)},"affectedRows":`;

interface WriteRoute {
  Params: { table: string; action: string };
  Querystring: QueryObject;
  Body: unknown;
}

export function writeRoutes(app: FastifyInstance, { db, schema }: Services): void {
  /** The job a write asks for, re-planned once against a fresh schema when it names something unknown. */
  async function jobOf(
    table: string,
    make: (table: TableInfo) => PlannedWrite,
  ): Promise<PlannedWrite> {
    const found = schema.require(table);
    const known = found instanceof Promise ? await found : found; // see http/read.ts
    const made = schema.plan(known, make);
    return (made instanceof Promise ? await made : made).plan;
  }

  /** The job run; on success, the preferences it honoured echoed. */
  async function run(
    request: FastifyRequest<WriteRoute>,
    reply: FastifyReply,
    preferences: Preferences,
    planned: PlannedWrite,
  ): Promise<WriteResult> {
    const result = await db.write(planned.job, request);
    const applied = appliedPreferences(preferences, planned.applied);
    if (applied !== '') reply.header('Preference-Applied', applied);
    reply.type(JSON_TYPE);
    return result;
  }

  app.post<WriteRoute>(
    '/table/:table/:action',
    gated({ kind: 'table', action: 'create' }),
    async (request, reply) => {
      actionOf(request, 'create');
      const found = schema.require(request.params.table);
      if (found instanceof Promise) await found; // a 404 comes before a 415
      requireJson(request);
      const preferences = parsePrefer(request.headers.prefer);
      const planned = await jobOf(request.params.table, (t) =>
        createJob(t, request.body, request.access, preferences, db.flavour),
      );
      const result = await run(request, reply, preferences, planned);
      const rows = rowsText(planned.representation, result.rows);
      return `${INSERTED}${JSON.stringify(result.insertId)},"affectedRows":${result.affectedRows}${rows}}`;
    },
  );

  app.put<WriteRoute>(
    '/table/:table/:action',
    gated({ kind: 'table', action: 'update' }),
    async (request, reply) => {
      const { match } = actionOf(request, 'update');
      const found = schema.require(request.params.table);
      if (found instanceof Promise) await found; // a 404 comes before a 415
      requireJson(request);
      const target = parseWriteTarget('update', match, request.query);
      const preferences = parsePrefer(request.headers.prefer);
      const planned = await jobOf(request.params.table, (t) =>
        updateJob(t, target, request.body, request.access, preferences, db.flavour),
      );
      const result = await run(request, reply, preferences, planned);
      return `${UPDATED}${result.affectedRows}${rowsText(planned.representation, result.rows)}}`;
    },
  );

  app.delete<WriteRoute>(
    '/table/:table/:action',
    { onRequest: ignoreEmptyBody, ...gated({ kind: 'table', action: 'delete' }) },
    async (request, reply) => {
      const { match } = actionOf(request, 'delete');
      const target = parseWriteTarget('delete', match, request.query);
      const preferences = parsePrefer(request.headers.prefer);
      const planned = await jobOf(request.params.table, (t) =>
        deleteJob(t, target, request.access, preferences),
      );
      const { affectedRows } = await run(request, reply, preferences, planned);
      return `${DELETED}${affectedRows}}`;
    },
  );
}

/** `,"rows":[…]`: the rows read back, serialized as a read serializes them; '' when not asked for. */
function rowsText(
  representation: PlannedWrite['representation'],
  rows: readonly (readonly unknown[])[] | null,
): string {
  if (representation === null) return '';
  if (representation === 'none' || rows === null) return ',"rows":[]';
  let text = ',"rows":[';
  for (let i = 0; i < rows.length; i++) {
    text += (i === 0 ? '' : ',') + representation(rows[i] as readonly unknown[]);
  }
  return `${text}]`;
}

/**
 * The action the last segment names, if it is this method's; another action's is a 405 naming
 * the method it takes, no action a 404.
 */
function actionOf<K extends WriteAction['kind']>(
  request: FastifyRequest<WriteRoute>,
  kind: K,
): Extract<WriteAction, { kind: K }> {
  const action = parseWriteAction(request.params.action);
  if (action?.kind !== kind) throw actionRefusal(request.method, request.url);
  return action as Extract<WriteAction, { kind: K }>;
}

/**
 * Fastify parses a body as its Content-Type says, so `text/plain` arrives here as a string and a
 * missing type with no body as undefined: both are refused like any other type.
 */
export function requireJson(request: FastifyRequest): void {
  const type = request.headers['content-type'];
  if (type === 'application/json') return; // what nearly every client sends: no parsing
  const essence = type?.split(';')[0]?.trim().toLowerCase();
  if (essence !== 'application/json') throw unsupportedMediaType();
}

/**
 * DELETE ignores its body; many clients still send `Content-Type: application/json` with an
 * empty one, which Fastify's JSON parser would refuse (FST_ERR_CTP_EMPTY_JSON_BODY). With no body
 * the type means nothing, so it is dropped before parsing. Runs after the auth guard (route hooks
 * follow the root's).
 */
export function ignoreEmptyBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const headers = request.raw.headers;
  const length = headers['content-length'];
  const empty =
    headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
  if (empty) delete headers['content-type'];
  done();
}
