/**
 * `POST /rpc/<procedure>`, `GET /rpc/<function>?<param>=<value>&…` and `POST /rpc/<function>`
 * (docs/routines.md): route → the routine, from the schema cache (404 when the database has none
 * of that name) → the rpc pipeline (pipeline/rpc.ts: a call job) → execute (one call, never in
 * a transaction of ours) → `{ success, results, out }` or `{ success, value }`. POST takes the
 * procedure when a procedure and a function share the name; GET only ever calls a function. A
 * POST without a body calls with no arguments.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { procedureNeedsPost } from '../errors.js';
import {
  type CallTarget,
  functionAnswer,
  functionJob,
  procedureAnswer,
  procedureJob,
} from '../pipeline/rpc.js';
import type { Services } from '../services.js';
import { JSON_TYPE } from './json-rows.js';
import { gated } from './route-gate.js';
import { ignoreEmptyBody, requireJson } from './write.js';

interface RpcRoute {
  Params: { name: string };
  Querystring: Record<string, string | string[] | undefined>;
  Body: unknown;
}

/** The routines the caller's role may call: what an unknown name's "did you mean" may suggest. */
function callableBy(request: FastifyRequest): ((routine: string) => boolean) | undefined {
  const { access } = request;
  return access === null ? undefined : access.policy.callableBy(access.role);
}

export function rpcRoutes(app: FastifyInstance, { config, db, schema }: Services): void {
  const { database } = config.db;
  // The flavour of the host in use, which `-h db1,db2` may change.
  const target = (): CallTarget => ({ database, flavour: db.flavour });
  const routinesFor = (request: FastifyRequest, name: string) =>
    schema.requireRoutines(name, callableBy(request));

  app.post<RpcRoute>(
    '/rpc/:name',
    { onRequest: ignoreEmptyBody, ...gated({ kind: 'routine' }) },
    async (request, reply) => {
      const found = await routinesFor(request, request.params.name);
      // No body: no Content-Type either (ignoreEmptyBody); a body must be JSON.
      if (request.headers['content-type'] !== undefined) requireJson(request);
      const { body } = request;
      const answer =
        found.procedure === undefined
          ? functionAnswer(await db.call(functionJob(target(), found.function, { body }), request))
          : procedureAnswer(await db.call(procedureJob(target(), found.procedure, body), request));
      reply.type(JSON_TYPE);
      return answer;
    },
  );

  app.get<RpcRoute>('/rpc/:name', gated({ kind: 'routine' }), async (request, reply) => {
    const { name } = request.params;
    const found = await routinesFor(request, name);
    if (found.function === undefined) throw procedureNeedsPost(name);
    const job = functionJob(target(), found.function, { query: request.query });
    const answer = functionAnswer(await db.call(job, request));
    reply.type(JSON_TYPE);
    return answer;
  });
}
