/**
 * `GET /table/<table>/changes` (docs/changes.md): every committed change of the table, read
 * from the binary log, as server-sent events, under the caller's policy. The options compile
 * as a read's do (changes/subscription.ts: `$select`, and `$filter` over the table's own
 * columns), so the hub (changes/hub.ts) decides with the very read the caller could send; `$since` or
 * `Last-Event-ID` resumes after an event. A 404 for the table comes before any 400.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthClaims } from '../auth/tokens.js';
import type { UserStates } from '../auth/user-states.js';
import type { ChangeFeed } from '../changes/hub.js';
import type { LogPosition } from '../changes/positions.js';
import { EventStream } from '../changes/sse.js';
import { compileSubscription, type SubscriptionOptions } from '../changes/subscription.js';
import type { TableInfo } from '../db/schema-types.js';
import { feedUnavailable, unsupportedInFeed } from '../errors.js';
import { FEED_RETRY_MS } from '../limits.js';
import type { Services } from '../services.js';
import { redactUrl } from './log-redaction.js';
import { gated } from './route-gate.js';

type QueryObject = Record<string, string | string[] | undefined>;

/** The options a stream takes; `access_token` is the guard's (http/auth-guard.ts). */
const OPTIONS: ReadonlySet<string> = new Set(['$select', '$filter', '$since', 'access_token']);

export function changesRoutes(app: FastifyInstance, services: Services, feed: ChangeFeed): void {
  const { schema, config } = services;

  function groupsFor(table: TableInfo, query: QueryObject, request: FastifyRequest) {
    const options: SubscriptionOptions = {
      ...(typeof query.$select === 'string' ? { $select: query.$select } : {}),
      ...(typeof query.$filter === 'string' ? { $filter: query.$filter } : {}),
    };
    return compileSubscription(table, options, request.access, services.db.flavour);
  }

  async function changes(
    request: FastifyRequest<{ Params: { table: string }; Querystring: QueryObject }>,
    reply: FastifyReply,
  ): Promise<void> {
    if (!feed.status.on) throw feedUnavailable(feed.status.reason);
    const table = await schema.require(request.params.table);
    const query = request.query;
    for (const [name, value] of Object.entries(query)) {
      if (!OPTIONS.has(name)) {
        throw unsupportedInFeed(
          `The change feed takes $select, $filter and $since (or Last-Event-ID), not ${name}`,
        );
      }
      if (Array.isArray(value)) throw unsupportedInFeed(`${name} is given more than once`);
    }
    const groups = groupsFor(table, query, request);
    const lastEventId = request.headers['last-event-id'];
    const since = typeof query.$since === 'string' ? query.$since : lastEventId;
    const position: LogPosition | null =
      typeof since === 'string' && since !== '' ? feed.positions.open(since) : null;
    if (position !== null) await feed.check(position);
    const auth = request.auth;
    reply.hijack();
    const raw = reply.raw;
    // Fastify's onResponse (the access line, server.ts) runs when the stream is ended here
    // (overflow, expiry, a stop), not when the client goes away: that one is written here, its
    // token redacted as in every line.
    raw.once('close', () => {
      if (raw.writableEnded) return;
      services.log.info(
        {
          reqId: request.id,
          method: request.method,
          url: redactUrl(request.url),
          status: raw.statusCode,
          ms: Math.round(reply.elapsedTime * 10) / 10,
          ip: request.ip,
        },
        'request',
      );
    });
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    raw.write(`retry: ${FEED_RETRY_MS}\n\n`);
    const stream = new EventStream(raw, {
      table: table.name,
      maxLag: config.feedMaxLag ?? 10_000,
      groups,
      compile: (fresh) => groupsFor(fresh, query, request),
      expired: () => (auth === null ? null : expiry(auth, services.auth?.states)),
      onEnd: (ended) => feed.unsubscribe(ended),
    });
    try {
      await feed.subscribe(stream, position);
    } catch (error) {
      const { code, message } = error as { code?: string; message?: string };
      stream.finish(
        'error',
        JSON.stringify({ code: code ?? 'FEED_UNAVAILABLE', message: message ?? 'error' }),
      );
    }
  }

  app.get<{ Params: { table: string }; Querystring: QueryObject }>(
    '/table/:table/changes',
    gated({ kind: 'table', action: 'read' }),
    async (request, reply) => {
      // A 410 must be an answer, not an event: a purged position is checked before the stream.
      await changes(request, reply);
      return reply;
    },
  );
}

/**
 * Why a stream's token no longer holds, or null. An own token's user is checked as the guard
 * checks each request (auth/user-states.ts): a removal, a new role or password ends the stream
 * within the states' refresh; an entry too old to trust is read again, the stream going on
 * meanwhile.
 */
function expiry(claims: AuthClaims, states: UserStates | undefined): string | null {
  const now = Date.now();
  if (claims.exp * 1000 <= now) return 'the token has expired';
  if (claims.passwordVersion === null || states === undefined) return null;
  const current = states.current(claims, now);
  if (current === undefined) {
    // Read again for the next check; a failed read is the next check's to try again.
    states.load(claims.sub).catch(() => {});
    return null;
  }
  return current ? null : "the token's user was removed, or given another role or password";
}
