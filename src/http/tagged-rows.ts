/**
 * A streamed read (not fetched whole: plan/small-read.ts) with its ETag (docs/caching.md). A tag
 * must go out in the headers, before the body, and be the hash of exactly that body, so the
 * answer is held as it arrives, up to PAGE_HOLD_BYTES for a page (a read that may get a Link),
 * else up to one chunk (RESPONSE_CHUNK_BYTES), at most `--max-answer-bytes`:
 * - an answer that ends within it is hashed and sent whole, with its ETag (304 when If-None-Match
 *   names it), as a held page always was;
 * - past it, the headers go out without an ETag and the rest streams with back-pressure, as every
 *   streamed read did (stall, minimum rate, taken back: execute/stream.ts). Tagging it would mean
 *   reading the whole answer before its first byte: a client that never reads could then make
 *   the gateway read an answer of any size, holding a connection for all of it (docs/operations.md, slow readers: "cheap for
 *   the attacker, dear for us"), and a slow reader could no longer be taken back after 64 KiB.
 * What is held before the body begins is bounded: a row larger than `maxBytes` in the held part
 * answers 400 ANSWER_TOO_LARGE, its statement stopped; an error before the headers is an ordinary
 * JSON error; after them the response can only be cut short.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { answerTooLarge } from '../errors.js';
import type { Caller, Database } from '../execute/database.js';
import type { RowFlow } from '../execute/stream.js';
import { PAGE_HOLD_BYTES, RESPONSE_CHUNK_BYTES } from '../limits.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { RowSerializer } from '../types/rows.js';
import { type CutShort, exceeds, JSON_ROWS, type RowsFraming, setLink } from './json-rows.js';
import type { PageLink } from './next-link.js';
import { notModified, readTag } from './read-tag.js';

/** A streamed read, tagged when it fits the hold: resolves once the answer has begun (or was refused). */
export function sendTaggedRows(
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
  total: number | null = null,
): Promise<void> {
  const { type, between } = framing;
  return new Promise((resolve, reject) => {
    let text = framing.head;
    let first = true;
    let rows = 0;
    let last: unknown[] | undefined;
    /**
     * Bytes the answer holds before it starts: a whole page while it may get a Link, else one
     * chunk (as streamed reads always did: a read's first bytes go out early); one chunk once
     * the body has begun.
     */
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
            setLink(reply, link === null ? null : link(rows, last, false));
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
            return;
          }
          const header = link === null ? null : link(rows, last, true);
          setLink(reply, header);
          if (!notModified(reply, readTag(text, total, header))) {
            // A held answer past one chunk goes chunked, as it would have streamed.
            reply
              .type(type)
              .send(text.length < RESPONSE_CHUNK_BYTES ? text : Readable.from([text]));
          }
          resolve();
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
