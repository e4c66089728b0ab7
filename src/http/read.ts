/**
 * `GET /table/<table>/read`: route → a read Operation → handle (pipeline/handle.ts: the table for
 * the role, the compiled read of the query string, its `$count`) → the Answer's rows as a JSON
 * array, or as CSV when Accept prefers `text/csv` (docs/reading.md), streamed, or fetched whole
 * when the plan bounds the result (plan/small-read.ts). `GET /table/<table>/read(<key>,<value>)`: the one row as a JSON
 * object (or a CSV header and record), 404 ROW_NOT_FOUND without one. find-my-way cannot match
 * parentheses in a pattern, so that last segment is a parameter and key-value.ts reads it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestLog } from '../log.js';
import type { RowsAnswer } from '../pipeline/answer.js';
import type { Handler } from '../pipeline/handle.js';
import { type CompiledRead, csvOf } from '../pipeline/read.js';
import { rawQueryString } from '../pipeline/read-cache.js';
import { isKeyRead, parseKeyRead } from '../query/key-value.js';
import type { Services } from '../services.js';
import { actionRefusal } from './allowed-methods.js';
import { csvFraming } from './csv-rows.js';
import { toApiError } from './errors.js';
import { etagOf } from './etag.js';
import { type CutShort, JSON_ROWS, JSON_TYPE, rowText, sendJsonRowsAtOnce } from './json-rows.js';
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

export function readRoutes(
  app: FastifyInstance,
  { db, skiptokens, config, log }: Services,
  handler: Handler,
): void {
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
  function answer(reply: FastifyReply, answered: RowsAnswer): Promise<FastifyReply> | undefined {
    // The same URL answers JSON or CSV by its Accept header: caches must tell them apart.
    vary(reply, ACCEPT);
    // The Link to the next page of a paged read (next-link.ts); null for any other.
    const link = links.of(answered.table, reply.request.query as QueryObject, answered.compiled);
    if (answered.total !== null) return counted(reply, answered.total, answered.read, link);
    return rows(reply, answered.read, link, null);
  }

  async function counted(
    reply: FastifyReply,
    total: Promise<number>,
    read: CompiledRead,
    link: PageLink | null,
  ): Promise<FastifyReply> {
    const count = await total;
    reply.header('X-Total-Count', String(count));
    return rows(reply, read, link, count) ?? reply;
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
  ): Promise<FastifyReply> | undefined {
    if (!compiled.small) return streamed(reply, compiled, link, total);
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
      const answered = handler.handle(
        {
          kind: 'read',
          table: request.params.table,
          query: request.query,
          queryText: rawQueryString(request.url),
        },
        request.access,
        // The request is its statements' caller as it is (http/caller.ts).
        request,
      );
      return answered instanceof Promise
        ? answered.then((made) => answer(reply, made) ?? reply)
        : answer(reply, answered);
    },
  );

  /** `read(<key>,<value>)`: the one row as a JSON object, or a CSV header and record. */
  async function keyRead(request: KeyReadRequest, reply: FastifyReply) {
    const { action } = request.params;
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
    if (prefersCsv(request.headers.accept)) {
      const csv = csvOf(read, config.csvFormulas);
      return sendJsonRowsAtOnce(reply, [row], csv.serialize, maxBytes, csvFraming(csv));
    }
    const text = rowText(row, read.serialize, maxBytes);
    // The row's ETag, which If-Match on its update or delete names (pipeline/precondition.ts).
    if (notModified(reply, etagOf(text))) return reply;
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
