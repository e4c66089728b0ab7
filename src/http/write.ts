/**
 * `POST /table/<t>/create`, `PUT /table/<t>/update(<key>,<value>)` and
 * `DELETE /table/<t>/delete(<key>,<value>)`: path → action (query/key-value) → plan → SQL →
 * one transaction (the execute stage) → `{ success, message, … }`. find-my-way cannot match
 * parentheses in a pattern, so the last segment is a parameter and key-value.ts reads it; an unknown action is a 404.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import type { TableInfo } from '../db/schema-types.js';
import { routeNotFound, unsupportedMediaType } from '../errors.js';
import type { WriteResult } from '../execute/write.js';
import { SUCCESS_MESSAGES } from '../messages.js';
import { deleteIsExact, insertIsExact, updateIsExact } from '../plan/exact-write.js';
import { planDelete, planInsert, planUpdate } from '../plan/write-plan.js';
import {
  createdRowViolation,
  guardDelete,
  guardInsert,
  guardUpdate,
  updatedRowViolation,
} from '../policy/stage.js';
import { parseWriteAction, type WriteAction } from '../query/key-value.js';
import type { Services } from '../services.js';
import {
  compileDelete,
  compileInsertBatches,
  compileInsertRechecks,
  compileUpdate,
  compileUpdateRecheck,
} from '../sql/compile-write.js';
import { sendFailure } from './errors.js';
import { JSON_TYPE } from './json-rows.js';

/**
 * The success answers, `{ success, message, … }`, as JSON text with the numbers appended: the
 * bytes JSON.stringify gave for the object (same keys, same order), without a serializer per
 * request (issue 17). The counts are integers and the insert id is a number, digits or null.
 */
const INSERTED = `{"success":true,"message":${JSON.stringify(SUCCESS_MESSAGES.inserted)},"insertId":`;
const UPDATED = `{"success":true,"message":${JSON.stringify(SUCCESS_MESSAGES.updated)},"affectedRows":`;
const DELETED = `{"success":true,"message":${JSON.stringify(SUCCESS_MESSAGES.deleted)},"affectedRows":`;

interface WriteRoute {
  Params: { table: string; action: string };
  Body: unknown;
}

export function writeRoutes(app: FastifyInstance, { db, schema }: Services): void {
  /**
   * `then` with the table the request names. Not async, like the read (issue 17): a known table,
   * nearly always, comes back at once and the answer comes from the driver's callback (the
   * handler returns nothing); only a schema read makes a promise, resolving with `reply`, which
   * Fastify waits for as it does an async handler's. A 404 comes before any 400.
   */
  function withTable(
    request: FastifyRequest<WriteRoute>,
    reply: FastifyReply,
    then: (table: TableInfo) => Promise<FastifyReply> | undefined,
  ): Promise<FastifyReply> | undefined {
    const found = schema.require(request.params.table);
    return found instanceof Promise ? found.then((table) => then(table) ?? reply) : then(found);
  }

  /** `then` with the write's plan; a schema miss re-reads the schema first (db/schema.ts). */
  function withPlan<P>(
    reply: FastifyReply,
    table: TableInfo,
    make: (table: TableInfo) => P,
    then: (plan: P) => void,
  ): Promise<FastifyReply> | undefined {
    const resolved = schema.plan(table, make);
    if (!(resolved instanceof Promise)) {
      then(resolved.plan);
      return undefined;
    }
    return resolved.then(({ plan }) => {
      then(plan);
      return reply;
    });
  }

  app.post<WriteRoute>('/table/:table/:action', (request, reply) => {
    actionOf(request, 'create');
    return withTable(request, reply, (table) => {
      requireJson(request);
      return withPlan(
        reply,
        table,
        (t) => planInsert(t, request.body),
        (planned) => {
          const plan = guardInsert(request.access, planned);
          // A policy's where beyond `col eq value`: checked after the INSERT, in its transaction.
          const rechecks = compileInsertRechecks(plan).map((query) => ({
            query,
            error: () => createdRowViolation(plan.table),
          }));
          db.write(
            compileInsertBatches(plan),
            {
              unprepare: plan.rows.length > 1,
              autocommit: insertIsExact(plan),
              guards: rechecks,
            },
            answer(
              reply,
              (result) =>
                `${INSERTED}${JSON.stringify(result.insertId)},"affectedRows":${result.affectedRows}}`,
            ),
          );
        },
      );
    });
  });

  app.put<WriteRoute>('/table/:table/:action', (request, reply) => {
    const { match } = actionOf(request, 'update');
    return withTable(request, reply, (table) => {
      requireJson(request);
      return withPlan(
        reply,
        table,
        (t) => planUpdate(t, match, request.body),
        (planned) => {
          const plan = guardUpdate(request.access, planned);
          // A policy's where on a column the update changes: checked after it, in its transaction.
          const recheck = compileUpdateRecheck(plan);
          db.write(
            [compileUpdate(plan)],
            {
              autocommit: updateIsExact(plan),
              guards: recheck
                ? [{ query: recheck, error: () => updatedRowViolation(plan.table) }]
                : [],
            },
            answer(reply, (result) => `${UPDATED}${result.affectedRows}}`),
          );
        },
      );
    });
  });

  app.delete<WriteRoute>(
    '/table/:table/:action',
    { onRequest: ignoreEmptyBody },
    (request, reply) => {
      const { match } = actionOf(request, 'delete');
      return withTable(request, reply, (table) =>
        withPlan(
          reply,
          table,
          (t) => planDelete(t, match),
          (planned) => {
            const plan = guardDelete(request.access, planned);
            db.write(
              [compileDelete(plan)],
              { autocommit: deleteIsExact(plan) },
              answer(reply, (result) => `${DELETED}${result.affectedRows}}`),
            );
          },
        ),
      );
    },
  );
}

/**
 * The write's callback: the success answer `text` makes of the result, or the error, to the error
 * handler. Thrown here it would reach the driver, not the error handler.
 */
function answer(reply: FastifyReply, text: (result: WriteResult) => string) {
  return (error: unknown, result?: WriteResult): void => {
    try {
      if (result === undefined) sendFailure(reply, error);
      else reply.type(JSON_TYPE).send(text(result));
    } catch (thrown) {
      sendFailure(reply, thrown);
    }
  };
}

/** The action the last segment names, if it is this method's; any other is a 404. */
function actionOf<K extends WriteAction['kind']>(
  request: FastifyRequest<WriteRoute>,
  kind: K,
): Extract<WriteAction, { kind: K }> {
  const action = parseWriteAction(request.params.action);
  if (action?.kind !== kind) throw routeNotFound(request.method, request.url);
  return action as Extract<WriteAction, { kind: K }>;
}

/**
 * Fastify parses a body as its Content-Type says, so `text/plain` arrives here as a string and a
 * missing type with no body as undefined: both are refused like any other type.
 */
function requireJson(request: FastifyRequest): void {
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
function ignoreEmptyBody(
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
