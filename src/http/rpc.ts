/**
 * `POST /rpc/<procedure>`, `GET /rpc/<function>?<param>=<value>&…` and `POST /rpc/<function>`
 * (docs/routines.md): route → a call Operation → handle (pipeline/handle.ts: the routine for the
 * role, from the schema cache — 404 when the database has none of that name —, its call job
 * (pipeline/rpc.ts), one call, never in a transaction of ours) → `{ success, results, out }` or
 * `{ success, value }`. POST takes the procedure when a procedure and a function share the name;
 * GET only ever calls a function. A POST without a body calls with no arguments.
 */
import type { FastifyInstance } from 'fastify';
import type { Handler } from '../pipeline/handle.js';
import { JSON_TYPE } from './json-rows.js';
import { gated } from './route-gate.js';
import { ignoreEmptyBody, requireJson } from './write.js';

interface RpcRoute {
  Params: { name: string };
  Querystring: Record<string, string | string[] | undefined>;
  Body: unknown;
}

export function rpcRoutes(app: FastifyInstance, handler: Handler): void {
  app.post<RpcRoute>(
    '/rpc/:name',
    { onRequest: ignoreEmptyBody, ...gated({ kind: 'routine' }) },
    async (request, reply) => {
      const { text } = await handler.handle(
        {
          kind: 'call',
          routine: request.params.name,
          // No body: no Content-Type either (ignoreEmptyBody); a body must be JSON. A 404 first.
          request: () => {
            if (request.headers['content-type'] !== undefined) requireJson(request);
            return { body: request.body };
          },
        },
        request.access,
        request,
      );
      reply.type(JSON_TYPE);
      return text;
    },
  );

  app.get<RpcRoute>('/rpc/:name', gated({ kind: 'routine' }), async (request, reply) => {
    const { text } = await handler.handle(
      { kind: 'call', routine: request.params.name, request: () => ({ query: request.query }) },
      request.access,
      request,
    );
    reply.type(JSON_TYPE);
    return text;
  });
}
