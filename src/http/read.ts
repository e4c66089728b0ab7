/**
 * `GET /table/<table>/read`: query string → ReadRequest → ReadPlan → SQL → JSON array, streamed,
 * or fetched whole when the plan bounds the result (plan/small-read.ts). A repeated query string
 * skips to the compiled read (read-cache.ts), and so does a query whose shape, its `$filter` but
 * for the integers, came before (read-shape.ts). The handler only calls the stages in order.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TableInfo } from '../db/schema-types.js';
import { planRead, type ReadPlan } from '../plan/read-plan.js';
import { guardRead } from '../policy/stage.js';
import { parseReadOptions } from '../query/options.js';
import type { Services } from '../services.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import { toApiError } from './errors.js';
import { sendJsonRows, sendJsonRowsAtOnce } from './json-rows.js';
import {
  type CachedRead,
  type CompiledRead,
  compiledRead,
  ReadCache,
  rawQueryString,
} from './read-cache.js';
import { ShapeCache } from './read-shape.js';

type QueryObject = Record<string, string | string[] | undefined>;
type ReadRequest = FastifyRequest<{ Params: { table: string }; Querystring: QueryObject }>;

export function readRoutes(app: FastifyInstance, { db, schema }: Services): void {
  const cache = new ReadCache();
  const shapes = new ShapeCache();

  /**
   * The read of `table`. Not an async function: a small read, nearly every one, answers from the
   * driver's callback and returns nothing (Fastify then waits for reply.send), without a promise
   * on its way (issue 17). Whatever must wait for a promise (a schema read, `$count`, a stream)
   * returns one, and Fastify answers it as it does an async handler's; a promise that comes to
   * the callback path resolves with `reply`, a thenable that settles when the answer is out.
   */
  function read(
    request: ReadRequest,
    reply: FastifyReply,
    known: TableInfo,
  ): Promise<FastifyReply> | undefined {
    const { access } = request;
    const query = rawQueryString(request.url);
    const cached = query === null ? undefined : cache.get(known, query);
    if (cached !== undefined) {
      return answer(reply, compiledRead(cached, guardRead(access, cached.plan), access));
    }
    // A miss may still find its shape: the same query but for $filter's integers.
    const shape = shapes.find(known, request.query);
    const templated = shape && shapes.read(shape, access);
    if (templated) return answer(reply, templated);
    const options = parseReadOptions(request.query);
    // A schema miss re-reads the schema and plans against the new table object (db/schema.ts).
    const resolved = schema.plan(known, (t) => planRead(options, t));
    const planned = ({ plan: made }: { plan: ReadPlan }) => {
      const entry: CachedRead =
        query === null ? { plan: made, compiled: null, byGrant: null } : cache.add(query, made);
      const plan = guardRead(access, entry.plan);
      const compiled = compiledRead(entry, plan, access);
      if (shape !== null) shapes.learn(shape, request.query, plan, compiled, access);
      return answer(reply, compiled);
    };
    return resolved instanceof Promise
      ? resolved.then((made) => planned(made) ?? reply)
      : planned(resolved);
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
    reply.header('X-Total-Count', String(await db.count(count)));
    return rows(reply, compiled) ?? reply;
  }

  /** The rows: a small read fetched whole and answered from the driver's callback, else streamed. */
  function rows(reply: FastifyReply, compiled: CompiledRead): Promise<FastifyReply> | undefined {
    if (!compiled.small) return streamed(reply, compiled);
    db.arrays(compiled.select, (error, found) => {
      // Thrown here it would reach the driver, not the error handler.
      try {
        if (error !== null && error !== undefined) fail(reply, error);
        else sendJsonRowsAtOnce(reply, found as unknown[][], compiled.serialize);
      } catch (thrown) {
        fail(reply, thrown);
      }
    });
    return undefined;
  }

  async function streamed(reply: FastifyReply, compiled: CompiledRead): Promise<FastifyReply> {
    await sendJsonRows(reply, db, compiled.select, compiled.serialize);
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
