/**
 * The resource path of an OData URL (docs/odata.md, "URLs"), the part after `/odata/`, as
 * segments: `<Name>` or `<Name>(<predicate>)`, then `$count`, a navigation or property name,
 * `$value`. A predicate is a key (`(5)`, `('a''b')`, `(k1=1,k2='x')`) or a function's
 * parameters (`(a=1,b='x')`); which one the first name is, the service model says
 * (odata/route.ts). Checks shape only; names are OData's (names.ts), values literal text.
 */
import { odataUnsupported } from '../errors.js';
import { excerpt } from '../query/lexer.js';

/** One `name=value` of a predicate (name null for a lone value), the value as written. */
export interface PredicatePart {
  readonly name: string | null;
  readonly text: string;
}

export type ODataPath =
  | { readonly kind: 'service' }
  | { readonly kind: 'metadata' }
  | {
      readonly kind: 'resource';
      readonly name: string;
      /** Null without parentheses. */
      readonly predicate: readonly PredicatePart[] | null;
      /** The segments after the first, decoded. */
      readonly rest: readonly string[];
    };

/** The path after `/odata/` as the request gave it (percent-encoded). */
export function parsePath(raw: string): ODataPath {
  const segments = raw.split('/').map((segment) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      throw odataUnsupported(
        `The path segment '${excerpt(segment)}' is not valid percent-encoding`,
      );
    }
  });
  // A trailing slash names the same resource (`/odata/`, `/odata/items/`).
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
  const [first = '', ...rest] = segments;
  if (first === '' && rest.length === 0) return { kind: 'service' };
  if (first === '$metadata' && rest.length === 0) return { kind: 'metadata' };
  const open = first.indexOf('(');
  if (open === -1) return { kind: 'resource', name: first, predicate: null, rest };
  if (!first.endsWith(')')) {
    throw odataUnsupported(`'${excerpt(first)}' has no closing parenthesis`);
  }
  return {
    kind: 'resource',
    name: first.slice(0, open),
    predicate: parsePredicate(first.slice(open + 1, -1)),
    rest,
  };
}

/**
 * `5`, `'a''b'`, `k1=1,k2='x'`: split at commas outside single-quoted strings, each part at its
 * first `=` outside one. `()` is no part at all (a function without parameters).
 */
export function parsePredicate(inner: string): PredicatePart[] {
  if (inner.trim() === '') return [];
  const parts: PredicatePart[] = [];
  let start = 0;
  let equals = -1;
  let quoted = false;
  const push = (end: number) => {
    const name = equals === -1 ? null : inner.slice(start, equals).trim();
    const text = inner.slice(equals === -1 ? start : equals + 1, end).trim();
    if (text === '' || name === '') {
      throw odataUnsupported(`The key or parameters '(${excerpt(inner)})' have an empty part`);
    }
    parts.push({ name, text });
  };
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === "'") quoted = !quoted;
    else if (quoted) continue;
    else if (c === '=' && equals === -1) equals = i;
    else if (c === ',') {
      push(i);
      start = i + 1;
      equals = -1;
    }
  }
  if (quoted) throw odataUnsupported(`The string in '(${excerpt(inner)})' has no closing quote`);
  push(inner.length);
  if (parts.some((p) => p.name === null) && parts.length > 1) {
    throw odataUnsupported(
      `'(${excerpt(inner)})': a key of several properties names each, (k1=1,k2='x')`,
    );
  }
  return parts;
}
