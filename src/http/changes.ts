/**
 * `GET /table/<table>/changes` (docs/changes.md): every committed change of the table, read
 * from the binary log, as server-sent events, under the caller's policy. The options compile
 * as a read's do (pipeline/read.ts: `$select`, and `$filter` over the table's own columns),
 * so the hub (changes/hub.ts) decides with the very read the caller could send; `$since` or
 * `Last-Event-ID` resumes after an event. A 404 for the table comes before any 400.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthClaims } from '../auth/tokens.js';
import type { UserStates } from '../auth/user-states.js';
import type { ChangeFeed } from '../changes/hub.js';
import type { LogPosition } from '../changes/positions.js';
import { EventStream } from '../changes/sse.js';
import type { TableInfo } from '../db/schema-types.js';
import { feedUnavailable, unsupportedInFeed } from '../errors.js';
import { FEED_RETRY_MS } from '../limits.js';
import { registerFeedMetrics } from '../metrics/feed.js';
import { bindRead, compileRead } from '../pipeline/read.js';
import { readView } from '../policy/views.js';
import type { Services } from '../services.js';
import { gated } from './route-gate.js';

type QueryObject = Record<string, string | string[] | undefined>;

/** The options a stream takes; `access_token` is the guard's (auth/guard.ts). */
const OPTIONS: ReadonlySet<string> = new Set(['$select', '$filter', '$since', 'access_token']);

/** What a `$filter` that walks a relation (a path or a lambda) compiles to. */
const RELATED_SQL = /\bJOIN\b|\bEXISTS\s*\(/;

export function changesRoutes(app: FastifyInstance, services: Services, feed: ChangeFeed): void {
  const { schema, config } = services;
  if (services.metrics !== undefined) registerFeedMetrics(services.metrics.registry, feed);

  function groupsFor(table: TableInfo, query: QueryObject, request: FastifyRequest) {
    const { access } = request;
    const options: QueryObject = {};
    if (query.$select !== undefined) options.$select = query.$select;
    if (query.$filter !== undefined) options.$filter = query.$filter;
    if (typeof query.$filter === 'string') {
      // Over the table's own columns only: a related row's change is not this table's.
      const alone = compileRead(table, { $filter: query.$filter }, null, services.db.flavour);
      if (RELATED_SQL.test(alone.select.sql)) {
        throw unsupportedInFeed(
          "The change feed's $filter takes the table's own columns only, not paths or lambdas over relations",
        );
      }
    }
    const read = bindRead(compileRead(table, options, access, services.db.flavour), access);
    for (const field of read.fields) {
      if (field.kind === 'value' && field.column.kind === 'geometry') {
        throw unsupportedInFeed(
          `The change feed cannot send the spatial column '${field.name}' (the binary log reader does not keep its exact value): leave it out with $select`,
        );
      }
    }
    const visible = readView(access, table).columnsByName;
    const keyColumns = table.primaryKey.filter((name) => visible.has(name));
    const keyRead = compileRead(
      table,
      keyColumns.length > 0 ? { $select: keyColumns.map(quoted).join(',') } : {},
      null,
      services.db.flavour,
    );
    const key = keyColumns.length > 0 ? keyRead : null;
    return {
      read: { key: groupKey(read.select), read },
      key:
        key === null
          ? { key: 'none', read: emptyKey(read) }
          : { key: groupKey(key.select), read: key },
    };
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

function quoted(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

function groupKey(query: { sql: string; params: readonly unknown[] }): string {
  return `${query.sql}\u0000${JSON.stringify(query.params)}`;
}

/** A table without a key the caller may see: every event's key is `{}`. */
function emptyKey(read: import('../pipeline/compiled-read.js').CompiledRead) {
  return { ...read, serialize: () => '{}' };
}
