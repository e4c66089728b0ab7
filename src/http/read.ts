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
import { sendJsonRows, sendJsonRowsAtOnce } from './json-rows.js';
import { NextLinks, type PageLink } from './next-link.js';

type QueryObject = Record<string, string | string[] | undefined>;
type ReadRequest = FastifyRequest<{ Params: { table: string }; Querystring: QueryObject }>;

export function readRoutes(app: FastifyInstance, services: Services): void {
  const { db, schema, skiptokens, config } = services;
  const pipeline = new ReadPipeline(schema, db.flavour, skiptokens);
  const links = new NextLinks(skiptokens, config.baseUrl);

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
    // The Link to the next page of a paged read (next-link.ts); null for any other.
    const linked = (made: CompiledRead) => links.of(known, request.query, made);
    return compiled instanceof Promise
      ? compiled.then((made) => answer(reply, bindRead(made, access), linked(made)) ?? reply)
      : answer(reply, bindRead(compiled, access), linked(compiled));
  }

  function answer(
    reply: FastifyReply,
    compiled: CompiledRead,
    link: PageLink | null,
  ): Promise<FastifyReply> | undefined {
    if (compiled.count !== null) return counted(reply, compiled.count, compiled, link);
    return rows(reply, compiled, link);
  }

  async function counted(
    reply: FastifyReply,
    count: CompiledQuery,
    compiled: CompiledRead,
    link: PageLink | null,
  ): Promise<FastifyReply> {
    reply.header('X-Total-Count', String(await db.count(count, reply.request)));
    return rows(reply, compiled, link) ?? reply;
  }

  /** The rows: a small read fetched whole and answered from the driver's callback, else streamed. */
  function rows(
    reply: FastifyReply,
    compiled: CompiledRead,
    link: PageLink | null,
  ): Promise<FastifyReply> | undefined {
    if (!compiled.small) return streamed(reply, compiled, link);
    db.arrays(
      compiled.select,
      (error, found) => {
        // Thrown here it would reach the driver, not the error handler.
        try {
          if (error !== null && error !== undefined) fail(reply, error);
          else sendJsonRowsAtOnce(reply, found as unknown[][], compiled.serialize, link);
        } catch (thrown) {
          fail(reply, thrown);
        }
      },
      // The request is its statements' caller as it is (http/caller.ts).
      reply.request,
    );
    return undefined;
  }

  async function streamed(
    reply: FastifyReply,
    compiled: CompiledRead,
    link: PageLink | null,
  ): Promise<FastifyReply> {
    await sendJsonRows(reply, db, compiled.select, compiled.serialize, reply.request, link);
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

/** To the error handler, as a rejected handler promise goes: reply.send answers an Error so. */
function fail(reply: FastifyReply, error: unknown): void {
  reply.send(error instanceof Error ? error : new Error(String(error)));
}
