/**
 * An OData request's query options → the read options of tablegate's own query language
 * (docs/reading.md), which OData's `$filter`, `$orderby`, `$select`, `$expand` and `$apply`
 * already are: identifiers that stand for other names (names.ts) written as those names, and
 * server-driven paging as a `$top` (docs/odata.md, "Paging"). `$format` is the answer's form
 * (format.ts); options of OData that tablegate does not serve are refused by name.
 */
import { odataUnsupported } from '../errors.js';
import type { QueryObject } from '../query/options.js';
import { decodeQueryText } from './names.js';

/** Options that hold names, rewritten by names.ts. */
const NAMED = new Set(['$select', '$filter', '$orderby', '$expand', '$apply']);
/** OData's options that tablegate does not serve (a 400 naming the option). */
const UNSUPPORTED = new Set([
  '$search',
  '$compute',
  '$index',
  '$levels',
  '$schemaversion',
  '$deltatoken',
  '$id',
]);

/** The read's options, and `$format` apart. */
export interface TranslatedQuery {
  readonly query: Record<string, string | readonly string[]>;
  readonly format: string | undefined;
}

/** The request's options in tablegate's terms (the pipeline's parse refuses what is malformed). */
export function translateQuery(raw: QueryObject): TranslatedQuery {
  const query: Record<string, string | readonly string[]> = {};
  let format: string | undefined;
  for (const [key, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    if (key === '$format') {
      format = typeof value === 'string' ? value : value[0];
      continue;
    }
    if (UNSUPPORTED.has(key)) {
      throw odataUnsupported(`The query option ${key} is not served (docs/odata.md)`);
    }
    // A parameter alias (`@p=1`, OData URL conventions §5.1.1.13) is not served.
    if (key.startsWith('@')) {
      throw odataUnsupported(`Parameter aliases such as '${key}' are not served (docs/odata.md)`);
    }
    if (!NAMED.has(key)) {
      query[key] = value;
      continue;
    }
    query[key] = typeof value === 'string' ? decodeQueryText(value) : value.map(decodeQueryText);
  }
  return { query, format };
}

/**
 * The page a collection read answers: the client's `$top` when it is within the page size (no
 * next link), else the page size (`Prefer: odata.maxpagesize`, at most `--odata-max-page`).
 */
export interface Paging {
  /** The `$top` the read runs with. */
  readonly top: number;
  /** Whether the server cut the page: a full page then has an `@odata.nextLink`. */
  readonly serverDriven: boolean;
  /** What is left of the client's `$top` after this page; null without one. */
  readonly remaining: number | null;
}

export function pagingOf(
  top: string | readonly string[] | undefined,
  maxPageSize: number | null,
  maxPage: number,
): Paging | null {
  const page = Math.min(maxPageSize ?? maxPage, maxPage);
  if (top === undefined) return { top: page, serverDriven: true, remaining: null };
  // A malformed or repeated $top is the parse's to refuse.
  if (typeof top !== 'string' || !/^[0-9]{1,15}$/.test(top)) return null;
  const asked = Number(top);
  if (asked <= page) return { top: asked, serverDriven: false, remaining: null };
  return { top: page, serverDriven: true, remaining: asked - page };
}
