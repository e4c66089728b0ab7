/**
 * An entity's key in the URL (`Set(5)`, `Set('a''b')`, `Set(k1=1,k2='x')`, docs/odata.md,
 * "Keys") against its set's key (model.ts): the key column and value of a key read or write
 * (query/key-value.ts) when the key is one column of a MySQL key, else a `$filter` that names
 * every key column (a composite key, or a read-only set's formed key). Values are OData
 * literals, which the filter language reads as they are; a bare value of a string property
 * (a GUID, say) is read as that string.
 */
import { invalidQuery, odataReadOnly } from '../errors.js';
import { parseFilter } from '../query/filter-parser.js';
import { type KeyValue, keyValue, type WriteTarget } from '../query/key-value.js';
import { excerpt } from '../query/lexer.js';
import type { ODataProperty, ODataSet } from './model.js';
import { queryName } from './names.js';
import type { PredicatePart } from './path.js';

export type EntityKey =
  | { readonly kind: 'key'; readonly match: KeyValue }
  | { readonly kind: 'filter'; readonly filter: string };

const describeKey = (set: ODataSet): string =>
  set.key.length === 1
    ? `(<${set.key[0]?.name}>)`
    : `(${set.key.map((p) => `${p.name}=…`).join(',')})`;

/** Each key property with the literal text the predicate gives it. */
function matched(set: ODataSet, parts: readonly PredicatePart[]): [ODataProperty, string][] {
  const form = describeKey(set);
  if (parts.length === 1 && parts[0]?.name === null) {
    if (set.key.length !== 1) {
      throw invalidQuery(`The key of '${set.name}' has ${set.key.length} properties: ${form}`);
    }
    return [[set.key[0] as ODataProperty, parts[0].text]];
  }
  const given = new Map<string, string>();
  for (const part of parts) {
    const name = part.name as string;
    if (given.has(name)) throw invalidQuery(`The key names '${excerpt(name)}' more than once`);
    given.set(name, part.text);
  }
  const found = set.key.map((property): [ODataProperty, string] => {
    const text = given.get(property.name);
    if (text === undefined) {
      throw invalidQuery(`The key of '${set.name}' is ${form}; '${property.name}' is missing`);
    }
    return [property, text];
  });
  if (given.size !== set.key.length) {
    throw invalidQuery(`The key of '${set.name}' is ${form}; it names other properties`);
  }
  return found;
}

/** The literal as the filter language reads it. */
function filterLiteral(property: ODataProperty, text: string): string {
  if (text.startsWith("'") || property.edm.name !== 'Edm.String') return text;
  return `'${text.replaceAll("'", "''")}'`;
}

export function entityKey(set: ODataSet, parts: readonly PredicatePart[]): EntityKey {
  const pairs = matched(set, parts);
  if (pairs.length === 1 && set.keyKind !== 'formed') {
    const [property, text] = pairs[0] as [ODataProperty, string];
    return { kind: 'key', match: keyValue(property.column.name, text) };
  }
  return {
    kind: 'filter',
    filter: keyFilter(
      pairs.map(([property, text]) => [property.column.name, filterLiteral(property, text)]),
    ),
  };
}

/**
 * The rows an update or delete of one entity changes, `Set(<key>)` alone and inside `$batch`
 * alike: a set the model does not know has no key OData can name, a formed key's set is
 * read-only.
 */
export function entityTarget(
  set: ODataSet | undefined,
  table: string,
  parts: readonly PredicatePart[],
): WriteTarget {
  if (set === undefined) {
    throw invalidQuery(`'${excerpt(table)}' has no key that OData can name (docs/odata.md)`);
  }
  if (set.keyKind === 'formed') throw odataReadOnly(set.name);
  const key = entityKey(set, parts);
  return key.kind === 'key'
    ? { kind: 'key', match: key.match }
    : { kind: 'filter', filter: parseFilter(key.filter), entity: true };
}

/**
 * `"k1" eq 1 and "k2" eq 'x'` from each key column and its value's literal text, refused unless
 * each value is one literal: the text is the client's, so `1 or 1 eq 1` or `line` (a column)
 * would otherwise make one entity's URL name many rows.
 */
export function keyFilter(pairs: readonly (readonly [column: string, text: string])[]): string {
  return pairs
    .map(([column, text]) => {
      const term = `${queryName(column)} eq ${text}`;
      const parsed = parseFilter(term);
      if (
        parsed.kind !== 'compare' ||
        parsed.right.kind === 'column' ||
        parsed.right.kind === 'call' ||
        parsed.right.kind === 'user'
      ) {
        throw invalidQuery(
          `The key value '${excerpt(text)}' of '${excerpt(column)}' is not one value`,
        );
      }
      return term;
    })
    .join(' and ');
}

/** An entity's key as the URL writes it, from its values' OData JSON text (`Set(5)`, `Set(a=1,b='x')`). */
export function keyPredicate(set: ODataSet, values: readonly string[]): string {
  const literal = (property: ODataProperty, json: string): string => {
    if (!json.startsWith('"')) return json;
    const value = JSON.parse(json) as string;
    return property.edm.name === 'Edm.String' ? `'${value.replaceAll("'", "''")}'` : value;
  };
  if (set.key.length === 1)
    return `(${encodeURIComponent(literal(set.key[0] as ODataProperty, values[0] as string))})`;
  return `(${set.key
    .map((p, i) => `${p.name}=${encodeURIComponent(literal(p, values[i] as string))}`)
    .join(',')})`;
}
