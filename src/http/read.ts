/**
 * `GET /table/<table>/read`: route → a read Operation → handle (pipeline/handle.ts: the table for
 * the role, the compiled read of the query string, its `$count`) → the Answer's rows as a JSON
 * array, or as CSV when Accept prefers `text/csv` (docs/reading.md), streamed, or fetched whole
 * when the plan bounds the result (plan/small-read.ts). `GET /table/<table>/read(<key>,<value>)`: the one row as a JSON
 * object (or a CSV header and record), 404 ROW_NOT_FOUND without one. find-my-way cannot match
 * parentheses in a pattern, so that last segment is a parameter and query/key-value.ts reads it.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type AnswerCache,
  type CachedAnswer,
  keyReadKey,
  readKey,
  type Ticket,
} from '../cache/answer-cache.js';
import { etagOf } from '../etag.js';
import { RESPONSE_CHUNK_BYTES } from '../limits.js';
import { requestLog } from '../log.js';
import type { RowsAnswer } from '../pipeline/answer.js';
import type { Handler } from '../pipeline/handle.js';
import { type CompiledRead, csvOf } from '../pipeline/read.js';
import { rawQueryString } from '../pipeline/read-cache.js';
import { isKeyRead, parseKeyRead } from '../query/key-value.js';
import type { Services } from '../services.js';
import { toApiError } from '../to-api-error.js';
import { actionRefusal } from './allowed-methods.js';
import { csvFraming } from './csv-rows.js';
import {
  type AnswerSent,
  type CutShort,
  JSON_ROWS,
  JSON_TYPE,
  rowText,
  sendJsonRowsAtOnce,
} from './json-rows.js';
import { prefersCsv, vary } from './negotiate.js';
import { NextLinks, type PageLink } from './next-link.js';
import { notModified } from './read-tag.js';
import { gated } from './route-gate.js';
import { sendTaggedRows } from './tagged-rows.js';

type QueryObject = Record<string, string | string[] | undefined>;
type KeyReadRequest = FastifyRequest<{
  Params: { table: string; action: string };
  Querystring: QueryObject;
}>;

const ACCEPT = ['Accept'];

/**
 * A miss the answer cache may keep (docs/caching.md): its key before the `@user` part, the
 * ticket taken before its first statement, and the `$count` once known.
 */
interface Keeping {
  readonly base: string;
  readonly ticket: Ticket;
  readonly request: FastifyRequest;
  total: number | null;
}

/** A kept answer sent again: the same bytes and headers, or 304 when the client has them. */
function sendCached(reply: FastifyReply, hit: CachedAnswer): FastifyReply {
  vary(reply, ACCEPT);
  // As a miss answers (read-tag.ts): the headers the tag covers are on a 304 too.
  if (hit.total !== null) reply.header('X-Total-Count', hit.total);
  if (hit.link !== null) reply.header('Link', hit.link);
  if (notModified(reply, hit.etag)) return reply;
  reply.type(hit.type);
  // As the miss sent it (json-rows.ts): a long answer as a stream, in chunks.
  return reply.send(hit.body.length < RESPONSE_CHUNK_BYTES ? hit.body : Readable.from([hit.body]));
}

export function readRoutes(
  app: FastifyInstance,
  { db, skiptokens, config, log }: Services,
  handler: Handler,
  /** `--cache` (cache/answer-cache.ts); null: none. */
  cache: AnswerCache | null = null,
): void {
  /** The answer's text as sent, kept when the read may be (a whole answer of known tables). */
  function keeper(keeping: Keeping | null, read: CompiledRead): AnswerSent | null {
    if (cache === null || keeping === null) return null;
    const { tables } = read;
    if (tables === null || tables === undefined) return null;
    // The tag as the miss made it: not hashed again.
    return (text, type, link, etag) => {
      cache.keep(
        keeping.ticket,
        keeping.base,
        read.namesUser,
        keeping.request.access?.user ?? null,
        tables,
        {
          body: Buffer.from(text),
          type,
          etag,
          total: keeping.total === null ? null : String(keeping.total),
          link,
        },
        read.row ?? null,
      );
    };
  }

  /** A miss of the cache, ready to be kept; null when there is no cache or nothing to look up. */
  function lookUp(
    request: FastifyRequest,
    reply: FastifyReply,
    base: string,
  ): FastifyReply | Keeping {
    const hit = (cache as AnswerCache).get(base, request.access?.user ?? null);
    if (hit !== undefined) return sendCached(reply, hit);
    return { base, ticket: (cache as AnswerCache).ticket(), request, total: null };
  }

  const links = new NextLinks(skiptokens, config.baseUrl, (read) => handler.isKept(read));
  /** The most an answer held before it is sent may take (json-rows.ts). */
  const maxBytes = config.maxAnswerBytes;
  /** A streamed answer cut short: a stalled or slow client, one taken back, MySQL failing. */
  const cutShort: CutShort = (reply, error) =>
    requestLog(log, reply.request).warn({ code: error.code }, error.message);

  /**
   * A read's rows as the route frames them. Not an async function: a small read, nearly every
   * one, answers from the driver's callback and returns nothing (Fastify then waits for
   * reply.send), without a promise on its way. Whatever must wait for a promise (a schema read,
   * `$count`, a stream) returns one, and Fastify answers it as it does an async handler's; a
   * promise that comes to the callback path resolves with `reply`, a thenable that settles when
   * the answer is out.
   */
  function answer(
    reply: FastifyReply,
    answered: RowsAnswer,
    keeping: Keeping | null,
  ): Promise<FastifyReply> | undefined {
    // The same URL answers JSON or CSV by its Accept header: caches must tell them apart.
    vary(reply, ACCEPT);
    // The Link to the next page of a paged read (next-link.ts); null for any other.
    const link = links.of(answered.table, reply.request.query as QueryObject, answered.compiled);
    if (answered.total !== null) {
      return counted(reply, answered.total, answered.read, link, keeping);
    }
    return rows(reply, answered.read, link, null, keeping);
  }

  async function counted(
    reply: FastifyReply,
    total: Promise<number>,
    read: CompiledRead,
    link: PageLink | null,
    keeping: Keeping | null,
  ): Promise<FastifyReply> {
    const count = await total;
    if (keeping !== null) keeping.total = count;
    reply.header('X-Total-Count', String(count));
    return rows(reply, read, link, count, keeping) ?? reply;
  }

  /**
   * The rows: a small read fetched whole and answered from the driver's callback, else streamed;
   * tagged with their `$count` (`total`, null without one) and Link (read-tag.ts).
   */
  function rows(
    reply: FastifyReply,
    compiled: CompiledRead,
    link: PageLink | null,
    total: number | null,
    keeping: Keeping | null,
  ): Promise<FastifyReply> | undefined {
    if (!compiled.small) return streamed(reply, compiled, link, total);
    const sent = keeper(keeping, compiled);
    db.arrays(
      compiled.select,
      (error, found) => {
        // Thrown here it would reach the driver, not the error handler.
        try {
          if (error !== null && error !== undefined) fail(reply, error);
          else if (!prefersCsv(reply.request.headers.accept)) {
            sendJsonRowsAtOnce(
              reply,
              found as unknown[][],
              compiled.serialize,
              maxBytes,
              JSON_ROWS,
              link,
              total,
              sent,
            );
          } else {
            const csv = csvOf(compiled, config.csvFormulas);
            sendJsonRowsAtOnce(
              reply,
              found as unknown[][],
              csv.serialize,
              maxBytes,
              csvFraming(csv),
              link,
              total,
              sent,
            );
          }
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
    total: number | null,
  ): Promise<FastifyReply> {
    const { request } = reply;
    const { select } = compiled;
    if (!prefersCsv(request.headers.accept)) {
      await sendTaggedRows(
        reply,
        db,
        select,
        compiled.serialize,
        request,
        maxBytes,
        cutShort,
        JSON_ROWS,
        link,
        compiled.rows,
        total,
      );
    } else {
      const csv = csvOf(compiled, config.csvFormulas);
      await sendTaggedRows(
        reply,
        db,
        select,
        csv.serialize,
        request,
        maxBytes,
        cutShort,
        csvFraming(csv),
        link,
        compiled.rows,
        total,
      );
    }
    return reply;
  }

  app.get<{ Params: { table: string }; Querystring: QueryObject }>(
    '/table/:table/read',
    gated({ kind: 'table', action: 'read' }),
    (request, reply) => {
      const queryText = rawQueryString(request.url);
      let keeping: Keeping | null = null;
      if (cache?.live && queryText !== null) {
        const csv = prefersCsv(request.headers.accept);
        const base = readKey(request.access?.role ?? '', request.params.table, csv, queryText);
        const found = lookUp(request, reply, base);
        if (!('ticket' in found)) return found;
        keeping = found;
      }
      const answered = handler.handle(
        { kind: 'read', table: request.params.table, query: request.query, queryText },
        request.access,
        // The request is its statements' caller as it is (http/caller.ts).
        request,
      );
      // A known table with a cached plan answers at once, without a promise: the hot path.
      return answered instanceof Promise
        ? answered.then((made) => answer(reply, made, keeping) ?? reply)
        : answer(reply, answered, keeping);
    },
  );

  /** `read(<key>,<value>)`: the one row as a JSON object, or a CSV header and record. */
  async function keyRead(request: KeyReadRequest, reply: FastifyReply) {
    const { action } = request.params;
    const queryText = rawQueryString(request.url);
    let keeping: Keeping | null = null;
    if (cache?.live && queryText !== null) {
      const csv = prefersCsv(request.headers.accept);
      const role = request.access?.role ?? '';
      const base = keyReadKey(role, request.params.table, csv, action, queryText);
      const found = lookUp(request, reply, base);
      if (!('ticket' in found)) return found;
      keeping = found;
    }
    const { read, row } = await handler.handle(
      {
        kind: 'key-read',
        table: request.params.table,
        // A 404 for the table comes before a 400 for the key.
        request: () => ({ key: parseKeyRead(action), query: request.query }),
      },
      request.access,
      request,
    );
    vary(reply, ACCEPT);
    const sent = keeper(keeping, read);
    if (prefersCsv(request.headers.accept)) {
      const csv = csvOf(read, config.csvFormulas);
      return sendJsonRowsAtOnce(
        reply,
        [row],
        csv.serialize,
        maxBytes,
        csvFraming(csv),
        null,
        null,
        sent,
      );
    }
    const text = rowText(row, read.serialize, maxBytes);
    // The row's ETag, which If-Match on its update or delete names (pipeline/precondition.ts).
    const tag = etagOf(text);
    sent?.(text, JSON_TYPE, null, tag);
    if (notModified(reply, tag)) return reply;
    reply.type(JSON_TYPE);
    return text;
  }

  app.get<{ Params: { table: string; action: string }; Querystring: QueryObject }>(
    '/table/:table/:action',
    gated({ kind: 'table', action: 'read' }),
    (request, reply) => {
      if (!isKeyRead(request.params.action)) throw actionRefusal(request.method, request.url);
      return keyRead(request, reply);
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
