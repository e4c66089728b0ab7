/**
 * `POST /table/<t>/create`, `PUT /table/<t>/update(<key>,<value>)` or `update?$filter=…` and
 * `DELETE /table/<t>/delete(<key>,<value>)` or `delete?$filter=…`: route → action
 * (query/key-value, query/write-query) and preferences (query/prefer) → a write Operation →
 * handle (pipeline/handle.ts: the table for the role, the job, its run) → the Answer's
 * `{ success, message, … }` (pipeline/answer.ts), with `Preference-Applied`
 * naming what was honoured (docs/writes.md). find-my-way cannot match parentheses in a pattern,
 * so the last segment is a parameter and query/key-value.ts reads it; an unknown action is a 404.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import { unsupportedMediaType } from '../errors.js';
import { writtenText } from '../pipeline/answer.js';
import type { Handler } from '../pipeline/handle.js';
import type { WriteOperation } from '../pipeline/operation.js';
import { parseEntityTags } from '../query/entity-tags.js';
import { parseWriteAction, type WriteAction } from '../query/key-value.js';
import type { QueryObject } from '../query/options.js';
import { parsePrefer } from '../query/prefer.js';
import { parseWriteTarget } from '../query/write-query.js';
import { actionRefusal } from './allowed-methods.js';
import { JSON_TYPE } from './json-rows.js';
import { gated } from './route-gate.js';

interface WriteRoute {
  Params: { table: string; action: string };
  Querystring: QueryObject;
  Body: unknown;
}

export function writeRoutes(app: FastifyInstance, handler: Handler): void {
  /** The write's answer: the success body, with the preferences it honoured echoed. */
  async function answered(
    request: FastifyRequest<WriteRoute>,
    reply: FastifyReply,
    operation: WriteOperation,
  ): Promise<string> {
    const answer = await handler.handle(operation, request.access, request);
    if (answer.applied !== '') reply.header('Preference-Applied', answer.applied);
    reply.type(JSON_TYPE);
    return writtenText(answer);
  }

  app.post<WriteRoute>(
    '/table/:table/:action',
    gated({ kind: 'table', action: 'create' }),
    (request, reply) => {
      actionOf(request, 'create');
      return answered(request, reply, {
        kind: 'create',
        table: request.params.table,
        // A 404 comes before a 415.
        request: () => {
          requireJson(request);
          return { body: request.body, preferences: parsePrefer(request.headers.prefer) };
        },
      });
    },
  );

  app.put<WriteRoute>(
    '/table/:table/:action',
    gated({ kind: 'table', action: 'update' }),
    (request, reply) => {
      const { match } = actionOf(request, 'update');
      return answered(request, reply, {
        kind: 'update',
        table: request.params.table,
        // A 404 comes before a 415.
        request: () => {
          requireJson(request);
          const target = parseWriteTarget('update', match, request.query);
          const preferences = parsePrefer(request.headers.prefer);
          const ifMatch = parseEntityTags(request.headers['if-match']);
          return { target, body: request.body, preferences, ifMatch };
        },
      });
    },
  );

  app.delete<WriteRoute>(
    '/table/:table/:action',
    { onRequest: ignoreEmptyBody, ...gated({ kind: 'table', action: 'delete' }) },
    (request, reply) => {
      const { match } = actionOf(request, 'delete');
      // Read before the table is looked up: no body, so nothing to tell a table apart by.
      const target = parseWriteTarget('delete', match, request.query);
      const preferences = parsePrefer(request.headers.prefer);
      const ifMatch = parseEntityTags(request.headers['if-match']);
      return answered(request, reply, {
        kind: 'delete',
        table: request.params.table,
        request: () => ({ target, preferences, ifMatch }),
      });
    },
  );
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
