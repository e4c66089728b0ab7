/**
 * Frames rows as a JSON array — or, in the same way, any framing of rows (csv-rows.ts: a header
 * record, then one record a row). Rows fetched whole (plan/small-read.ts) go out as one string
 * with a Content-Length under one chunk (64 KiB), else chunked; streamed rows are framed the
 * same way by tagged-rows.ts. Every answer carries its ETag (read-tag.ts) and answers 304 to an
 * If-None-Match that names it.
 *
 * What is held before the body starts is bounded by `maxBytes` (`--max-answer-bytes`,
 * docs/reading.md): rows fetched whole that pass it together answer 400 ANSWER_TOO_LARGE, before
 * anything of them is sent. The bytes are counted as the text grows, so building stops at the row
 * that passes the bound.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { type ApiError, answerTooLarge } from '../errors.js';
import { RESPONSE_CHUNK_BYTES } from '../limits.js';
import type { RowSerializer } from '../types/rows.js';
import type { PageLink } from './next-link.js';
import { notModified, readTag } from './read-tag.js';

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

/** Told of an answer fetched whole as it is sent: its text, type, Link and ETag. */
export type AnswerSent = (text: string, type: string, link: string | null, etag: string) => void;

/** Told when a response that has begun is cut short (the client sees it end early). */
export type CutShort = (reply: FastifyReply, error: ApiError) => void;

/**
 * Whether `text` takes more than `max` bytes as UTF-8: a UTF-16 unit is one to three bytes, so
 * its length alone tells but between max ÷ 3 and max characters (only then is it measured).
 */
export function exceeds(text: string, max: number): boolean {
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
  total: number | null = null,
  /** Told of the answer's text, Link and ETag as sent (the answer cache keeps them). */
  sent: AnswerSent | null = null,
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
  const tag = readTag(text, total, header);
  sent?.(text, framing.type, header, tag);
  if (notModified(reply, tag)) return reply;
  reply.type(framing.type);
  return reply.send(text.length < RESPONSE_CHUNK_BYTES ? text : Readable.from([text]));
}

export function setLink(reply: FastifyReply, header: string | null): void {
  if (header !== null) reply.header('Link', header);
}
