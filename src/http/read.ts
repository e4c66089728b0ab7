/**
 * `GET /table/<table>/read`: query string → ReadRequest → ReadPlan → SQL → JSON array, streamed,
 * or fetched whole when the plan bounds the result (plan/small-read.ts).
 * The handler only calls the stages in order.
 */
import type { FastifyInstance } from 'fastify';
import { cachedRowSerializer } from '../db/rows.js';
import { planRead } from '../plan/read-plan.js';
import { isSmallRead } from '../plan/small-read.js';
import { guardRead } from '../policy/stage.js';
import { parseReadOptions } from '../query/options.js';
import type { Services } from '../services.js';
import { compileCount, compileRead } from '../sql/compile-read.js';
import { sendJsonRows, sendJsonRowsAtOnce } from './json-rows.js';

type QueryObject = Record<string, string | string[] | undefined>;

export function readRoutes(app: FastifyInstance, { db, schema }: Services): void {
  app.get<{ Params: { table: string }; Querystring: QueryObject }>(
    '/table/:table/read',
    async (request, reply) => {
      const known = await schema.require(request.params.table); // a 404 comes before any 400
      const options = parseReadOptions(request.query);
      const { table, plan: planned } = await schema.plan(known, (t) => planRead(options, t));
      const plan = guardRead(request.access, planned);
      if (plan.count) reply.header('X-Total-Count', String(await db.count(compileCount(plan))));
      const serialize = cachedRowSerializer(table, plan.columns);
      if (isSmallRead(plan))
        return sendJsonRowsAtOnce(reply, await db.arrays(compileRead(plan)), serialize);
      await sendJsonRows(reply, db, compileRead(plan), serialize);
      return reply;
    },
  );
}
