/**
 * The `Link: <…>; rel="next"` header (RFC 8288) of a paged read: the same request with
 * `$skiptoken=<token>` in place of `$skip` (and of the token it came with), the token holding the
 * position after the page's last row (pipeline/skiptoken.ts). The URL is relative
 * (`/table/<t>/read?…`, resolved against the request's own URL) unless `--base-url` is set, which
 * it then starts with: behind a proxy the Host header need not be the address clients use, so
 * the gateway never builds an absolute URL from it (docs/paging.md).
 */
import type { TableInfo } from '../db/schema-types.js';
import type { CompiledRead } from '../pipeline/read.js';
import { bindingOf, type Position, type Skiptokens } from '../pipeline/skiptoken.js';
import type { QueryObject } from '../query/options.js';
import { seekValueOf } from '../sql/compile-seek.js';

/**
 * The header of a page after `rows` rows, the last of which is `last`: when the page `ended`
 * there, only a full page has one; when the answer must start before the page ends (past
 * PAGE_HOLD_BYTES), the rest of the page is skipped by count after `last`. Null for no link.
 */
export type PageLink = (
  rows: number,
  last: readonly unknown[] | undefined,
  ended: boolean,
) => string | null;

/** What a key or value may keep unencoded in a query string (RFC 3986 pchar), for legibility. */
const LEGIBLE = /%(?:24|2C|2F|3A|40)/g;
const LEGIBLE_CHARS: Readonly<Record<string, string>> = {
  '%24': '$',
  '%2C': ',',
  '%2F': '/',
  '%3A': ':',
  '%40': '@',
};

function encode(text: string): string {
  return encodeURIComponent(text).replace(LEGIBLE, (code) => LEGIBLE_CHARS[code] as string);
}

/** The request's query string with `$skiptoken=<token>` in place of `$skip` and any old token. */
export function nextQuery(query: QueryObject, token: string): string {
  let text = '';
  for (const [key, raw] of Object.entries(query)) {
    if (key === '$skip' || key === '$skiptoken' || raw === undefined) continue;
    for (const value of typeof raw === 'string' ? [raw] : raw) {
      text += `${encode(key)}=${encode(value)}&`;
    }
  }
  return `${text}$skiptoken=${token}`;
}

/** What every Link of one read has in common: the token's binding, the text before the token. */
interface LinkFrame {
  readonly binding: string;
  readonly head: string;
  /**
   * A kept frame's last Link and its position: a page read again ends at the same row until
   * the rows change, and its Link is the same text (the token's IV is synthetic).
   */
  last: { readonly position: Position; readonly link: string } | null;
}

function samePosition(a: Position, b: Position): boolean {
  if (a.skip !== b.skip) return false;
  if (a.after === null || b.after === null) return a.after === b.after;
  if (a.after.length !== b.after.length) return false;
  for (let at = 0; at < a.after.length; at++) if (a.after[at] !== b.after[at]) return false;
  return true;
}

/** How a link is written: the path of a table's reads, and what stands around the URL. */
export interface LinkForm {
  readonly path: (table: TableInfo) => string;
  readonly open: string;
  readonly close: string;
}

/** REST's: `Link: </table/<t>/read?…>; rel="next"`. */
const REST_LINK: LinkForm = {
  path: (table) => `/table/${encodeURIComponent(table.name)}/read`,
  open: '<',
  close: '>; rel="next"',
};

export class NextLinks {
  /**
   * The frame of each kept read of a page without a token: such a read belongs to one query
   * string (pipeline/read-cache.ts), so its frame is the same on every request that brings it,
   * and encoding the query again was a tenth of a page's own CPU. Only kept reads: a WeakMap
   * entry for a read made per request would outlive young-generation collections (a read by
   * shape promoted 900 bytes a request).
   */
  private readonly frames = new WeakMap<CompiledRead, LinkFrame>();

  constructor(
    private readonly tokens: Skiptokens,
    /** `--base-url`, without a trailing slash; null for relative links. */
    private readonly baseUrl: string | null,
    /** Whether a read belongs to one query string alone (ReadPipeline.isKept). */
    private readonly isKept: (read: CompiledRead) => boolean = () => false,
    private readonly form: LinkForm = REST_LINK,
  ) {}

  private frameOf(
    table: TableInfo,
    query: QueryObject,
    read: CompiledRead,
    shown: QueryObject,
  ): LinkFrame {
    return {
      binding: bindingOf(table.name, query, read.page?.signature ?? ''),
      head: `${this.form.open}${this.baseUrl ?? ''}${this.form.path(table)}?${nextQuery(shown, '')}`,
      last: null,
    };
  }

  /**
   * The link maker of a read's page, or null when it can have no next page. `query` is what the
   * read was made of (what its token is bound to), `shown` what the link repeats of the request,
   * when a front door's query options are not the read's own (odata/route.ts).
   */
  of(
    table: TableInfo,
    query: QueryObject,
    read: CompiledRead,
    shown: QueryObject = query,
  ): PageLink | null {
    const page = read.page;
    if (page === null || page.top === null || page.top === 0) return null;
    const { top, keys } = page;
    // A page read without a token is often read again (pipeline/skiptoken.ts keeps its Link).
    const first = query.$skiptoken === undefined;
    return (rows, last, ended) => {
      if (last === undefined || rows === 0 || (ended && rows < top)) return null;
      const position: Position =
        keys === null
          ? { skip: page.skip + top, after: null }
          : {
              skip: ended ? 0 : Math.max(0, top - rows),
              after: keys.map(({ slot, key }) => seekValueOf(key.expr.column, last[slot])),
            };
      let frame = first ? this.frames.get(read) : undefined;
      const kept = frame !== undefined || (first && this.isKept(read));
      if (frame === undefined) {
        frame = this.frameOf(table, query, read, shown);
        if (kept) this.frames.set(read, frame);
      }
      const { last: known } = frame;
      if (known !== null && samePosition(known.position, position)) return known.link;
      const link = `${frame.head}${this.tokens.seal(frame.binding, position, first)}${this.form.close}`;
      if (kept) frame.last = { position, link };
      return link;
    };
  }
}
