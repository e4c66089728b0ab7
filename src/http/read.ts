/**
 * `GET /table/<table>/read`: route → the read pipeline (pipeline/read.ts: the compiled read of
 * the query string for the caller) → execute → the rows as a JSON array, streamed, or fetched
 * whole when the plan bounds the result (plan/small-read.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TableInfo } from '../db/schema-types.js';
import { bindRead, type CompiledRead, ReadPipeline } from '../pipeline/read.js';
import type { Services } from '../services.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { toApiError } from './errors.js';
import { sendJsonRows, sendJsonRowsAtOnce } from './json-rows.js';

type QueryObject = Record<string, string | string[] | undefined>;
type ReadRequest = FastifyRequest<{ Params: { table: string }; Querystring: QueryObject }>;

export function readRoutes(app: FastifyInstance, { db, schema }: Services): void {
  const pipeline = new ReadPipeline(schema, db.flavour);

  /**
   * The read of `table`. Not an async function: a small read, nearly every one, answers from the
   * driver's callback and returns nothing (Fastify then waits for reply.send), without a promise
   * on its way. Whatever must wait for a promise (a schema read, `$count`, a stream) returns one,
   * and Fastify answers it as it does an async handler's; a promise that comes to the callback
   * path resolves with `reply`, a thenable that settles when the answer is out.
   */
  function read(
    request: ReadRequest,
    reply: FastifyReply,
    known: TableInfo,
  ): Promise<FastifyReply> | undefined {
    const { access } = request;
    const compiled = pipeline.read(known, request.url, request.query, access);
    return compiled instanceof Promise
      ? compiled.then((made) => answer(reply, bindRead(made, access)) ?? reply)
      : answer(reply, bindRead(compiled, access));
  }

  function answer(reply: FastifyReply, compiled: CompiledRead): Promise<FastifyReply> | undefined {
    if (compiled.count !== null) return counted(reply, compiled.count, compiled);
    return rows(reply, compiled);
  }

  async function counted(
    reply: FastifyReply,
    count: CompiledQuery,
    compiled: CompiledRead,
  ): Promise<FastifyReply> {
    reply.header('X-Total-Count', String(await db.count(count, reply.request)));
    return rows(reply, compiled) ?? reply;
  }

  /** The rows: a small read fetched whole and answered from the driver's callback, else streamed. */
  function rows(reply: FastifyReply, compiled: CompiledRead): Promise<FastifyReply> | undefined {
    if (!compiled.small) return streamed(reply, compiled);
    db.arrays(
      compiled.select,
      (error, found) => {
        // Thrown here it would reach the driver, not the error handler.
        try {
          if (error !== null && error !== undefined) fail(reply, error);
          else sendJsonRowsAtOnce(reply, found as unknown[][], compiled.serialize);
        } catch (thrown) {
          fail(reply, thrown);
        }
      },
      // The request is its statements' caller as it is (http/caller.ts).
      reply.request,
    );
    return undefined;
  }

  async function streamed(reply: FastifyReply, compiled: CompiledRead): Promise<FastifyReply> {
    await sendJsonRows(reply, db, compiled.select, compiled.serialize, reply.request);
    return reply;
  }

  app.get<{ Params: { table: string }; Querystring: QueryObject }>(
    '/table/:table/read',
    (request, reply) => {
      // A 404 comes before any 400. A known table comes back at once; a promise only when the
      // schema is being read.
      const found = schema.require(request.params.table);
      return found instanceof Promise
        ? found.then((known) => read(request, reply, known) ?? reply)
        : read(request, reply, found);
    },
  );
}

/**
 * To the error handler, as a rejected handler promise goes: reply.send answers an Error so. It
 * takes for an error only an Error of its own realm; anything else is mapped here, so that a
 * socket error Node made in another realm (under a VM context, as in jest) is still the 503 it
 * is rather than a 500 that lost its code.
 */
function fail(reply: FastifyReply, error: unknown): void {
  reply.send(error instanceof Error ? error : toApiError(error));
}
