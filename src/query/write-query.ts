/**
 * Which rows an update or delete changes, from its path and query string: the `(<key>,<value>)`
 * after the action, or a `$filter` (`PUT …/update?$filter=…`, docs/writes.md) — one of the two,
 * never both, never neither (a write to every row says so: `$filter=true eq true`). `$filter` is
 * the only option; another `$option` is refused, and so is an option without its `$`, which
 * would otherwise change every row. Checks text only; the plan stage resolves the names.
 */
import { invalidQuery, optionWithoutDollar } from '../errors.js';
import { parseFilter } from './filter-parser.js';
import type { KeyValue, WriteTarget } from './key-value.js';
import { excerpt } from './lexer.js';
import { misspeltOption, type QueryObject } from './options.js';

export function parseWriteTarget(
  kind: 'update' | 'delete',
  match: KeyValue | null,
  query: QueryObject,
): WriteTarget {
  let filter: string | undefined;
  for (const [key, raw] of Object.entries(query)) {
    if (!key.startsWith('$')) {
      const meant = misspeltOption(key);
      if (meant !== null) throw optionWithoutDollar(excerpt(key), meant);
      continue;
    }
    if (key !== '$filter') {
      throw invalidQuery(
        `Unknown query option '${excerpt(key)}' for ${kind}; the only option is $filter`,
      );
    }
    if (raw === undefined) continue;
    if (typeof raw !== 'string' && raw.length > 1) {
      throw invalidQuery('Query option $filter is given more than once');
    }
    filter = typeof raw === 'string' ? raw : raw[0];
  }
  if (match !== null) {
    if (filter !== undefined) {
      throw invalidQuery(
        `Give ${kind}(<key>,<value>) or ${kind}?$filter=…, not both: put the key into the filter`,
      );
    }
    return { kind: 'key', match };
  }
  if (filter === undefined) {
    throw invalidQuery(
      `Write ${kind}: name the rows with a key, ${kind}(id,5), or a filter, ${kind}?$filter=id eq 5`,
    );
  }
  if (filter.trim() === '') {
    throw invalidQuery(`$filter is empty; to ${kind} every row write $filter=true eq true`);
  }
  return { kind: 'filter', filter: parseFilter(filter) };
}
