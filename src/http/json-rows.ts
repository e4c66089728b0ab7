/**
 * Frames a row stream as a JSON array — or, in the same way, any framing of rows (csv-rows.ts:
 * a header record, then one record a row) — serialized as rows arrive. A result that fits in
 * one chunk (64 KiB) goes out as one string with a Content-Length; a larger one streams, with
 * back-pressure: when the socket is full the row flow pauses, and it resumes with the bytes the
 * client has taken (the execute stage holds them against the minimum rate). An error before the
 * first chunk is an ordinary JSON error; after it, the response can only be cut short. A client
 * that leaves cancels the flow (the execute stage stops the statement). A page that may link to
 * the next (next-link.ts) is held until it ends, up to PAGE_HOLD_BYTES, since its Link header
 * names its last row and headers go before the body.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { RowSerializer } from '../db/rows.js';
import type { Caller, Database } from '../execute/database.js';
import type { RowFlow } from '../execute/stream.js';
import { PAGE_HOLD_BYTES, RESPONSE_CHUNK_BYTES } from '../limits.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { PageLink } from './next-link.js';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** How rows are written around their serialized text: before, between and after them. */
export interface RowsFraming {
  readonly type: string;
  readonly head: string;
  readonly between: string;
  readonly tail: string;
}

/** A JSON array of the row objects. */
export const JSON_ROWS: RowsFraming = { type: JSON_TYPE, head: '[', between: ',', tail: ']' };

export function sendJsonRows(
  reply: FastifyReply,
  db: Database,
  query: CompiledQuery,
  serialize: RowSerializer,
  caller: Caller,
  framing: RowsFraming = JSON_ROWS,
  link: PageLink | null = null,
): Promise<void> {
  const { type, between } = framing;
  return new Promise((resolve, reject) => {
    let text = framing.head;
    let first = true;
    let rows = 0;
    let last: unknown[] | undefined;
    /** Bytes the answer holds before it starts: a whole page while it may get a Link. */
    let hold = link === null ? RESPONSE_CHUNK_BYTES : PAGE_HOLD_BYTES;
    let body: Readable | null = null;
    let ended = false;
    /** Bytes pushed into the body: all of them are the client's by the time it asks for more. */
    let sent = 0;
    // Assigned before the first row can arrive: rows come in a later I/O callback.
    let flow: RowFlow | undefined;

    db.stream(
      query,
      {
        row(values) {
          text += (first ? '' : between) + serialize(values);
          first = false;
          rows++;
          last = values;
          if (text.length < hold) return;
          if (!body) {
            hold = RESPONSE_CHUNK_BYTES;
            if (link !== null) setLink(reply, link(rows, last, false));
            body = new Readable({
              read: () => flow?.resume(sent),
              destroy: (error, callback) => {
                if (!ended) flow?.cancel();
                callback(error);
              },
            });
            reply.type(type).send(body);
            resolve();
          }
          // As bytes, which is what push() would make of the text anyway, to count them.
          const chunk = Buffer.from(text);
          sent += chunk.length;
          text = '';
          if (!body.push(chunk)) flow?.pause();
        },
        end() {
          ended = true;
          text += framing.tail;
          if (body) {
            body.push(text);
            body.push(null);
          } else {
            if (link !== null) setLink(reply, link(rows, last, true));
            // A held page past one chunk goes chunked, as it would have streamed.
            reply
              .type(type)
              .send(text.length < RESPONSE_CHUNK_BYTES ? text : Readable.from([text]));
            resolve();
          }
        },
        fail(error) {
          ended = true;
          if (body) body.destroy(error);
          else reject(error);
        },
      },
      caller,
    ).then((started) => {
      flow = started;
    }, reject);
  });
}

/**
 * The same framing for rows fetched whole (plan/small-read.ts): the same bytes, one string with
 * a Content-Length under RESPONSE_CHUNK_BYTES, else streamed, as sendJsonRows would have.
 */
export function sendJsonRowsAtOnce(
  reply: FastifyReply,
  rows: readonly unknown[][],
  serialize: RowSerializer,
  framing: RowsFraming = JSON_ROWS,
  link: PageLink | null = null,
): FastifyReply {
  if (link !== null) setLink(reply, link(rows.length, rows[rows.length - 1], true));
  let text = framing.head;
  for (let i = 0; i < rows.length; i++) {
    text += (i === 0 ? '' : framing.between) + serialize(rows[i] as unknown[]);
  }
  text += framing.tail;
  reply.type(framing.type);
  return reply.send(text.length < RESPONSE_CHUNK_BYTES ? text : Readable.from([text]));
}

function setLink(reply: FastifyReply, header: string | null): void {
  if (header !== null) reply.header('Link', header);
}
