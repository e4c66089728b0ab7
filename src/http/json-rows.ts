/**
 * Frames a row stream as a JSON array — or, in the same way, any framing of rows (csv-rows.ts:
 * a header record, then one record a row) — serialized as rows arrive. A result that fits in
 * one chunk (64 KiB) goes out as one string with a Content-Length; a larger one streams, with
 * back-pressure: when the socket is full the row flow pauses, and it resumes with the bytes the
 * client has taken (the execute stage holds them against the minimum rate). An error before the
 * first chunk is an ordinary JSON error; after it, the response can only be cut short (and the
 * cut is logged: the access log never sees such a response end). A client
 * that leaves cancels the flow (the execute stage stops the statement). A page that may link to
 * the next (next-link.ts) is held until it ends, up to PAGE_HOLD_BYTES, since its Link header
 * names its last row and headers go before the body.
 *
 * What is held before the body starts is bounded by `maxBytes` (`--max-answer-bytes`,
 * docs/reading.md): a held page starts streaming at that size at the latest, and an answer that
 * cannot start within it — rows fetched whole that pass it together, or a row larger than it
 * before the body began — answers 400 ANSWER_TOO_LARGE instead, its statement stopped, before
 * anything of it is sent. The bytes are counted as the text grows, so building stops at the row
 * that passes the bound.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { RowSerializer } from '../db/rows.js';
import { type ApiError, answerTooLarge } from '../errors.js';
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

/** Told when a response that has begun is cut short (the client sees it end early). */
export type CutShort = (reply: FastifyReply, error: ApiError) => void;

export function sendJsonRows(
  reply: FastifyReply,
  db: Database,
  query: CompiledQuery,
  serialize: RowSerializer,
  caller: Caller,
  maxBytes: number,
  cutShort: CutShort,
  framing: RowsFraming = JSON_ROWS,
  link: PageLink | null = null,
  estimate = 0,
): Promise<void> {
  const { type, between } = framing;
  return new Promise((resolve, reject) => {
    let text = framing.head;
    let first = true;
    let rows = 0;
    let last: unknown[] | undefined;
    /** Bytes the answer holds before it starts: a whole page while it may get a Link. */
    let hold = Math.min(link === null ? RESPONSE_CHUNK_BYTES : PAGE_HOLD_BYTES, maxBytes);
    let body: Readable | null = null;
    let ended = false;
    /** Bytes pushed into the body: all of them are the client's by the time it asks for more. */
    let sent = 0;
    // Assigned before the first row can arrive: rows come in a later I/O callback.
    let flow: RowFlow | undefined;
    let refused = false;

    db.stream(
      query,
      {
        row(values) {
          // Rows the driver had read before the statement stopped.
          if (refused) return;
          const piece = serialize(values);
          // Before the body, whatever is held is below `hold` (at most maxBytes): only a row
          // larger than the bound on its own makes an answer that cannot start within it.
          if (!body && exceeds(piece, maxBytes)) {
            refuse();
            return;
          }
          text += (first ? '' : between) + piece;
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
        socket: () => reply.raw.socket ?? null,
        end() {
          if (ended) return;
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
          if (ended) return;
          ended = true;
          if (body) {
            cutShort(reply, error);
            body.destroy(error);
          } else reject(error);
        },
      },
      caller,
      estimate,
    ).then((started) => {
      flow = started;
      if (refused) started.cancel();
    }, reject);

    /** The answer held passed the bound before its body began: stop the statement, answer 400. */
    function refuse(): void {
      ended = true;
      refused = true;
      text = '';
      flow?.cancel();
      reject(answerTooLarge(maxBytes));
    }
  });
}

/**
 * Whether `text` takes more than `max` bytes as UTF-8: a UTF-16 unit is one to three bytes, so
 * its length alone tells but between max ÷ 3 and max characters (only then is it measured).
 */
function exceeds(text: string, max: number): boolean {
  if (text.length * 3 <= max) return false;
  if (text.length > max) return true;
  return Buffer.byteLength(text) > max;
}

/**
 * One row read by its key, as the JSON object it is answered with: more than `maxBytes` throw
 * ANSWER_TOO_LARGE.
 */
export function rowText(row: unknown[], serialize: RowSerializer, maxBytes: number): string {
  const text = serialize(row);
  if (exceeds(text, maxBytes)) throw answerTooLarge(maxBytes);
  return text;
}

/**
 * The same framing for rows fetched whole (plan/small-read.ts): the same bytes, one string with
 * a Content-Length under RESPONSE_CHUNK_BYTES, else streamed, as sendJsonRows would have; more
 * than `maxBytes` of them throw ANSWER_TOO_LARGE.
 */
export function sendJsonRowsAtOnce(
  reply: FastifyReply,
  rows: readonly unknown[][],
  serialize: RowSerializer,
  maxBytes: number,
  framing: RowsFraming = JSON_ROWS,
  link: PageLink | null = null,
  /** Told of the answer's text and Link as sent (the answer cache keeps them). */
  sent: ((text: string, type: string, link: string | null) => void) | null = null,
): FastifyReply {
  let text = framing.head;
  for (let i = 0; i < rows.length; i++) {
    text += (i === 0 ? '' : framing.between) + serialize(rows[i] as unknown[]);
    // Thrown before any header is set: the caller answers the 400.
    if (exceeds(text, maxBytes)) throw answerTooLarge(maxBytes);
  }
  text += framing.tail;
  if (exceeds(text, maxBytes)) throw answerTooLarge(maxBytes);
  const header = link === null ? null : link(rows.length, rows[rows.length - 1], true);
  setLink(reply, header);
  reply.type(framing.type);
  sent?.(text, framing.type, header);
  return reply.send(text.length < RESPONSE_CHUNK_BYTES ? text : Readable.from([text]));
}

function setLink(reply: FastifyReply, header: string | null): void {
  if (header !== null) reply.header('Link', header);
}
