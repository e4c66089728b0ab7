/**
 * `If-None-Match` and `If-Match` (RFC 9110 §13.1.1, §13.1.2, §8.8.3): `*` or a list of entity
 * tags, each `"opaque"` or weak `W/"opaque"`. Parsed without any schema, for every front door
 * (docs/caching.md). A member that is no entity tag (garbage, an unquoted word) names no tag and
 * matches nothing; the rest of the list still counts, so a bad value never fails a request.
 */

/** One entity tag of a list: its opaque part with the quotes, and whether it was weak. */
export interface EntityTag {
  readonly opaque: string;
  readonly weak: boolean;
}

/** `*` (any current representation), or the tags the list names (maybe none). */
export type EntityTags = '*' | readonly EntityTag[];

/**
 * RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E /
 * obs-text (so a comma may be inside the quotes, and the list is read tag by tag).
 */
const MEMBER = /\s*(?:(\*)|(W\/)?("[\x21\x23-\x7e\x80-\xff]*"))\s*(?:,|$)/y;

/** A header's tags; null when the header is absent (no condition at all). */
export function parseEntityTags(header: string | undefined): EntityTags | null {
  if (header === undefined) return null;
  const tags: EntityTag[] = [];
  let at = 0;
  while (at < header.length) {
    MEMBER.lastIndex = at;
    const found = MEMBER.exec(header);
    if (found === null) {
      // Not an entity tag: skip to the next comma, it names nothing.
      const comma = header.indexOf(',', at);
      if (comma < 0) break;
      at = comma + 1;
      continue;
    }
    at = MEMBER.lastIndex;
    // `*` is the whole field value or nothing: within a list it names no tag.
    if (found[1] !== undefined) {
      if (header.trim() === '*') return '*';
      continue;
    }
    tags.push({ opaque: found[3] as string, weak: found[2] !== undefined });
  }
  return tags;
}

/** `"opaque"` or `W/"opaque"` as sent back: split once, compared by the functions below. */
function asTag(etag: string): EntityTag {
  return etag.startsWith('W/')
    ? { opaque: etag.slice(2), weak: true }
    : { opaque: etag, weak: false };
}

/**
 * If-None-Match (weak comparison, §8.8.3.2): whether the client's copy is the current one, so
 * a GET answers 304. `*` matches any current representation.
 */
export function noneMatchHolds(tags: EntityTags | null, current: string): boolean {
  if (tags === null) return false;
  if (tags === '*') return true;
  const { opaque } = asTag(current);
  return tags.some((tag) => tag.opaque === opaque);
}

/**
 * If-Match (strong comparison, §13.1.1): whether the current representation (null: the target
 * has none) is one the client names, so the write may go on. A weak tag never matches.
 */
export function ifMatchHolds(tags: EntityTags, current: string | null): boolean {
  if (current === null) return false;
  if (tags === '*') return true;
  const now = asTag(current);
  if (now.weak) return false;
  return tags.some((tag) => !tag.weak && tag.opaque === now.opaque);
}
