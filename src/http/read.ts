/**
 * `GET /table/<table>/read`: query string → ReadRequest → ReadPlan → SQL → JSON array, streamed,
 * or fetched whole when the plan bounds the result (plan/small-read.ts). A repeated query string
 * skips to the compiled read (read-cache.ts). The handler only calls the stages in order.
 */
import type { FastifyInstance } from 'fastify';
import { planRead } from '../plan/read-plan.js';
import { guardRead } from '../policy/stage.js';
import { parseReadOptions } from '../query/options.js';
import type { Services } from '../services.js';
import { sendJsonRows, sendJsonRowsAtOnce } from './json-rows.js';
import { type CachedRead, compiledRead, ReadCache, rawQueryString } from './read-cache.js';

type QueryObject = Record<string, string | string[] | undefined>;

export function readRoutes(app: FastifyInstance, { db, schema }: Services): void {
  const cache = new ReadCache();
  app.get<{ Params: { table: string }; Querystring: QueryObject }>(
    '/table/:table/read',
    async (request, reply) => {
      // A 404 comes before any 400. A known table comes back at once: awaited only when it is
      // a promise (a schema read), so the usual request pays no microtask turn (issue 17).
      const found = schema.require(request.params.table);
      const known = found instanceof Promise ? await found : found;
      const query = rawQueryString(request.url);
      let cached: CachedRead | undefined = query === null ? undefined : cache.get(known, query);
      if (cached === undefined) {
        const options = parseReadOptions(request.query);
        // A schema miss re-reads the schema and plans against the new table object (db/schema.ts).
        const resolved = schema.plan(known, (t) => planRead(options, t));
        const { plan: planned } = resolved instanceof Promise ? await resolved : resolved;
        cached =
          query === null
            ? { plan: planned, compiled: null, byGrant: null }
            : cache.add(query, planned);
      }
      const plan = guardRead(request.access, cached.plan);
      const read = compiledRead(cached, plan, request.access);
      if (read.count !== null) reply.header('X-Total-Count', String(await db.count(read.count)));
      if (read.small)
        return sendJsonRowsAtOnce(reply, await db.arrays(read.select), read.serialize);
      await sendJsonRows(reply, db, read.select, read.serialize);
      return reply;
    },
  );
}
