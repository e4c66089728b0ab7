/**
 * A streamed read (not fetched whole: plan/small-read.ts) with its ETag (docs/caching.md). Its
 * tag must go out in the headers, before the body, and be the hash of exactly that body, so the
 * read runs inside one consistent, read-only snapshot on one connection (Database.snapshot):
 * - the first pass serializes the rows as they arrive and holds the text, up to
 *   PAGE_HOLD_BYTES (at most `--max-answer-bytes`). An answer that ends within it is hashed and
 *   sent whole, as a held page always was (json-rows.ts): one pass, the snapshot closed.
 * - past that bound the first pass goes on hashing without holding anything; at its end the tag
 *   is known, and If-None-Match may answer 304 without reading again. Otherwise the headers go
 *   out and a second pass over the same snapshot streams the same rows with back-pressure, as
 *   every streamed read did (stall, minimum rate, taken back: execute/stream.ts). It is hashed
 *   again as it goes: should its bytes differ from the first pass's (a table outside InnoDB's
 *   snapshots, MyISAM or Aria, written in between), the answer is cut short rather than end
 *   under a tag that does not fit it, and the cut is logged.
 * What is held before the body begins is bounded as before: a row larger than `maxBytes` in the
 * held part answers 400 ANSWER_TOO_LARGE, its statement stopped; an error before the headers is
 * an ordinary JSON error; after them the response can only be cut short.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { answerChanged, answerTooLarge } from '../errors.js';
import type { Caller, Database, Snapshot } from '../execute/database.js';
import { rereadable } from '../execute/retry.js';
import type { RowFlow } from '../execute/stream.js';
import { PAGE_HOLD_BYTES, RESPONSE_CHUNK_BYTES } from '../limits.js';
import type { CompiledQuery } from '../sql/compiled-query.js';
import type { RowSerializer } from '../types/rows.js';
import { type CutShort, exceeds, JSON_ROWS, type RowsFraming, setLink } from './json-rows.js';
import type { PageLink } from './next-link.js';
import { notModified, ReadTagHash, readTag } from './read-tag.js';

/** A streamed read, tagged: resolves once the answer has begun (or was refused). */
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
  const hold = Math.min(PAGE_HOLD_BYTES, maxBytes);
  /**
   * One attempt; a connection that broke before any row arrived (or a node not ready) is tried
   * once more on a fresh one, as every streamed read is (execute/retry.ts).
   */
  const attempt = (last: boolean): Promise<void> =>
    db.snapshot(caller, estimate).then(
      (snapshot) => pass(snapshot, last),
      (refused: unknown) =>
        last || !rereadable(refused) ? Promise.reject(refused) : attempt(true),
    );
  return attempt(false);

  function pass(snapshot: Snapshot, retried: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      /** The answer held so far; null once it passed `hold` (then only hashed). */
      let held: string | null = framing.head;
      let hash: ReadTagHash | null = null;
      let rows = 0;
      let last: unknown[] | undefined;
      let over = false;
      let flow: RowFlow | undefined;

      const refuse = () => {
        over = true;
        held = null;
        flow?.cancel();
        snapshot.close();
        reject(answerTooLarge(maxBytes));
      };

      flow = snapshot.stream(query, {
        row(values) {
          if (over) return;
          const piece = serialize(values);
          const text = (rows === 0 ? '' : between) + piece;
          rows++;
          last = values;
          if (held === null) {
            (hash as ReadTagHash).add(text);
            return;
          }
          // Only a row larger than the bound on its own makes an answer that cannot start.
          if (exceeds(piece, maxBytes)) {
            refuse();
            return;
          }
          held += text;
          if (held.length < hold) return;
          hash = new ReadTagHash();
          hash.add(held);
          held = null;
        },
        socket: () => reply.raw.socket ?? null,
        end() {
          if (over) return;
          over = true;
          const header = link === null ? null : link(rows, last, true);
          if (held !== null) {
            snapshot.close();
            const text = held + framing.tail;
            setLink(reply, header);
            if (!notModified(reply, readTag(text, total, header))) {
              // A held answer past one chunk goes chunked, as it would have streamed.
              reply
                .type(type)
                .send(text.length < RESPONSE_CHUNK_BYTES ? text : Readable.from([text]));
            }
            resolve();
            return;
          }
          const done = hash as ReadTagHash;
          done.add(framing.tail);
          const tag = done.tag(total, header);
          setLink(reply, header);
          if (notModified(reply, tag)) {
            snapshot.close();
            resolve();
            return;
          }
          again(reply, snapshot, query, serialize, framing, cutShort, tag, total, header);
          resolve();
        },
        fail(error, cause) {
          if (over) return;
          over = true;
          snapshot.close();
          if (!retried && rows === 0 && rereadable(cause)) attempt(true).then(resolve, reject);
          else reject(error);
        },
      });
    });
  }
}

/** The second pass: the same rows streamed as the body, checked against the tag sent. */
function again(
  reply: FastifyReply,
  snapshot: Snapshot,
  query: CompiledQuery,
  serialize: RowSerializer,
  framing: RowsFraming,
  cutShort: CutShort,
  tag: string,
  total: number | null,
  header: string | null,
): void {
  const { between } = framing;
  const hash = new ReadTagHash();
  let text = framing.head;
  let first = true;
  let ended = false;
  /** Bytes pushed into the body: all of them are the client's by the time it asks for more. */
  let sent = 0;
  let flow: RowFlow | undefined;
  const body = new Readable({
    read: () => flow?.resume(sent),
    destroy: (error, callback) => {
      if (!ended) flow?.cancel();
      callback(error);
    },
  });
  const push = (chunk: string): boolean => {
    hash.add(chunk);
    // As bytes, which is what push() would make of the text anyway, to count them.
    const bytes = Buffer.from(chunk);
    sent += bytes.length;
    return body.push(bytes);
  };
  reply.type(framing.type).send(body);
  flow = snapshot.stream(query, {
    row(values) {
      text += (first ? '' : between) + serialize(values);
      first = false;
      if (text.length < RESPONSE_CHUNK_BYTES) return;
      const chunk = text;
      text = '';
      if (!push(chunk)) flow?.pause();
    },
    socket: () => reply.raw.socket ?? null,
    end() {
      if (ended) return;
      ended = true;
      snapshot.close();
      const rest = text + framing.tail;
      hash.add(rest);
      if (hash.tag(total, header) !== tag) {
        const error = answerChanged();
        cutShort(reply, error);
        body.destroy(error);
        return;
      }
      body.push(rest);
      body.push(null);
    },
    fail(error) {
      if (ended) return;
      ended = true;
      snapshot.close();
      cutShort(reply, error);
      body.destroy(error);
    },
  });
}
