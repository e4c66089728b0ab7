/**
 * The last path segment of a table route, as Fastify decoded it (once): `create`,
 * `update(<key>,<value>)` or `delete(<key>,<value>)` — or `update`/`delete` alone, whose rows a
 * `$filter` names (write-query.ts) — and `read(<key>,<value>)`. Checks shape only; the key
 * column is resolved by the plan stage. `<value>` follows the filter language's literal rules
 * (lexer.ts `parseLiteral`): a single-quoted string with `''` for a quote, or a bare token.
 */
import { invalidQuery } from '../errors.js';
import type { FilterExpr, Literal } from './ast.js';
import { excerpt, isDigitRun, isWhitespace, parseLiteral } from './lexer.js';

/** `update(<key>,<value>)` / `delete(<key>,<value>)` with the parts taken apart. */
export interface KeyValue {
  /** The key column's name as written (its quotes removed, if it was quoted). */
  readonly key: string;
  readonly value: Literal;
  /**
   * The value exactly as written when it is a bare token (`007`, `TRUE`, `null`), else null.
   * A bare number or keyword that is the key of a text column means its text, not a number.
   */
  readonly bare: string | null;
}

/** What `update`/`delete` were given to find their rows, before it is resolved. */
export type WriteTarget =
  | { readonly kind: 'key'; readonly match: KeyValue }
  | {
      readonly kind: 'filter';
      readonly filter: FilterExpr;
      /**
       * The filter is one entity's key (OData's `Set(k1=…,k2=…)`: each column of a unique key
       * `eq` one value), so If-Match may check its one row (pipeline/precondition.ts); absent
       * for a `$filter` write, whose If-Match is refused.
       */
      readonly entity?: true;
    };

export type WriteAction =
  | { readonly kind: 'create' }
  /** `match` is null for `update` alone: the rows of its `$filter`. */
  | { readonly kind: 'update'; readonly match: KeyValue | null }
  | { readonly kind: 'delete'; readonly match: KeyValue | null };

const KEYED = new Set(['update', 'delete']);

/**
 * The action a path segment names, or null when it names none (the route answers 404).
 * `update` or `delete` with a malformed `(<key>,<value>)` is a 400 that says what is wrong.
 */
export function parseWriteAction(segment: string): WriteAction | null {
  if (segment === 'create') return { kind: 'create' };
  const open = segment.indexOf('(');
  const name = open === -1 ? segment : segment.slice(0, open);
  if (!KEYED.has(name)) return null;
  const kind = name as 'update' | 'delete';
  if (open === -1) return { kind, match: null };
  return { kind, match: keyIn(segment, open, `${kind}(<key>,<value>)`) };
}

/** Whether a path segment is `read(…)`; any other is no action (the route answers 404). */
export const isKeyRead = (segment: string): boolean => segment.startsWith('read(');

/** `read(<key>,<value>)` (isKeyRead): the key and value; a malformed one is a 400. */
export function parseKeyRead(segment: string): KeyValue {
  return keyIn(segment, 4, 'read(<key>,<value>)');
}

/** The key and value between the parentheses that open at `open`. */
function keyIn(segment: string, open: number, form: string): KeyValue {
  if (!segment.endsWith(')')) {
    throw invalidQuery(`${prefix(form)}: '${excerpt(segment)}' has no closing parenthesis`);
  }
  return parseKeyValue(segment.slice(open + 1, -1), form);
}

/** How messages name the form: `Write update(<key>,<value>)`, `Read read(<key>,<value>)`. */
const prefix = (form: string) => `${form.startsWith('read') ? 'Read' : 'Write'} ${form}`;

/**
 * `<key>,<value>` (the text between the parentheses). The split is at the first comma after the
 * key: an unquoted key runs to the first comma, so a key that contains a comma (or starts or ends
 * with a space) is written in double quotes as everywhere else a request names a column
 * (`update("zip code",'40301')`, a doubled quote for a quote), or in backticks, MySQL style, with
 * a doubled backtick for a backtick. Everything after that comma is the value, commas and
 * parentheses included.
 */
export function parseKeyValue(inner: string, form = 'update(<key>,<value>)'): KeyValue {
  let i = 0;
  while (isWhitespace(inner[i])) i++;
  const { key, value } =
    inner[i] === '`' || inner[i] === '"'
      ? splitQuotedKey(Array.from(inner), i, form)
      : splitKey(inner, i);
  if (key === '') throw invalidQuery(`${prefix(form)}: the key column is empty`);
  if (value === null) {
    throw invalidQuery(`${prefix(form)}: a comma and a value must follow the key`);
  }
  return keyValue(key, value);
}

/** A key column and its value's text, read as `update(<key>,<value>)` reads them. */
export function keyValue(key: string, value: string): KeyValue {
  const trimmed = isDigitRun(value) ? value : value.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
  return { key, value: parseLiteral(value), bare: trimmed.startsWith("'") ? null : trimmed };
}

/** A key and the text after its comma (null without a comma). */
interface KeySplit {
  readonly key: string;
  readonly value: string | null;
}

/**
 * An unquoted key runs to the first comma. Worked on UTF-16 units, not code points: the only
 * characters that matter here (comma, whitespace) are single units that no surrogate equals, so
 * the split and the trim are the same either way (hot path: no array of characters).
 */
function splitKey(inner: string, start: number): KeySplit {
  const comma = inner.indexOf(',', start);
  let end = comma === -1 ? inner.length : comma;
  while (end > start && isWhitespace(inner[end - 1])) end--;
  return { key: inner.slice(start, end), value: comma === -1 ? null : inner.slice(comma + 1) };
}

/**
 * A key in double quotes or backticks, `chars[start]` being the opening one (positions in
 * messages count characters).
 */
function splitQuotedKey(chars: readonly string[], start: number, form: string): KeySplit {
  const quoted = scanQuotedName(chars, start);
  if (quoted === null) {
    const mark = chars[start] === '"' ? 'double quote' : 'backtick';
    throw invalidQuery(`${prefix(form)}: the key has no closing ${mark}`);
  }
  let i = quoted.end;
  while (isWhitespace(chars[i])) i++;
  if (i < chars.length && chars[i] !== ',') {
    throw invalidQuery(
      `${prefix(form)}: unexpected text after the quoted key at position ${i + 1}`,
    );
  }
  return { key: quoted.name, value: i >= chars.length ? null : chars.slice(i + 1).join('') };
}

/**
 * `chars[i]` is a double quote or a backtick: the name up to the closing one (the mark doubled
 * stands for itself), or null.
 */
function scanQuotedName(chars: readonly string[], i: number): { name: string; end: number } | null {
  const mark = chars[i] as string;
  const name: string[] = [];
  let j = i + 1;
  while (j < chars.length) {
    const c = chars[j] as string;
    if (c === mark) {
      if (chars[j + 1] !== mark) return { name: name.join(''), end: j + 1 };
      name.push(mark);
      j += 2;
    } else {
      name.push(c);
      j++;
    }
  }
  return null;
}
