/**
 * What a read's ETag covers (docs/caching.md): the bytes of its body and, when it has them, the
 * headers that vary with the rows — `X-Total-Count` (`$count`) and `Link` (a paged read's next
 * page). Without them the tag is etagOf(body) itself; with them, the SHA-1 of the body followed
 * by NUL, `X-Total-Count: <n>\r\n` and/or `Link: <value>\r\n`, NUL and the body's length in bytes
 * (the length read from the end tells where the body stops, so two different answers never hash
 * the same text). Equal tags mean the same body and the same headers.
 */
import { createHash, type Hash } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { etagOf } from '../etag.js';
import { noneMatchHolds, parseEntityTags } from '../query/entity-tags.js';

function suffix(total: number | null, link: string | null, bodyBytes: number): string {
  const count = total === null ? '' : `X-Total-Count: ${total}\r\n`;
  const next = link === null ? '' : `Link: ${link}\r\n`;
  return `\0${count}${next}\0${bodyBytes}`;
}

/** The tag of an answer whose body is `body` (whole), with its `$count` and Link (null: none). */
export function readTag(body: string, total: number | null, link: string | null): string {
  if (total === null && link === null) return etagOf(body);
  return etagOf(body + suffix(total, link, Buffer.byteLength(body)));
}

/** The same tag, from the body's text as it comes, piece by piece. */
export class ReadTagHash {
  private readonly hash: Hash = createHash('sha1');
  private bytes = 0;

  add(text: string): void {
    this.hash.update(text);
    this.bytes += Buffer.byteLength(text);
  }

  /** The tag, once the whole body was added (the hash is used up). */
  tag(total: number | null, link: string | null): string {
    if (total !== null || link !== null) this.hash.update(suffix(total, link, this.bytes));
    return `"${this.hash.digest('base64url')}"`;
  }
}

/**
 * Puts the tag on the answer; when If-None-Match names it (weak comparison, or `*`), answers 304
 * with no body — with the headers already set, ETag, Vary and the X-Total-Count and Link the tag
 * covers — and says so.
 */
export function notModified(reply: FastifyReply, tag: string): boolean {
  reply.header('ETag', tag);
  const header = reply.request.headers['if-none-match'];
  if (header === undefined || !noneMatchHolds(parseEntityTags(header), tag)) return false;
  reply.code(304).send();
  return true;
}
