/**
 * The `$filter` parameter's description: the language in brief, its functions read from the
 * function table — the names the parser knows (query/ast.ts), the column types each takes
 * (plan/filter-types.ts) and the MySQL function it runs (sql/compile-read.ts) — and the limits
 * of limits.ts, so a function or limit is described the day it exists.
 */

import {
  MAX_FILTER_BYTES,
  MAX_FILTER_CALLS,
  MAX_IN_VALUES,
  MAX_NESTING,
  MAX_PATTERN_CHARS,
} from '../limits.js';
import { FN_RULES } from '../plan/filter-types.js';
import { COLUMN_FNS, type ColumnFn } from '../query/ast.js';
import { FN_SQL } from '../sql/compile-filter.js';

/** `tolower` (LOWER), `toupper` (UPPER) … take a text column; …, grouped by what they take. */
function functionList(): string {
  const byTakes = new Map<string, ColumnFn[]>();
  for (const fn of COLUMN_FNS) {
    const takes = FN_RULES[fn].takesText;
    byTakes.set(takes, [...(byTakes.get(takes) ?? []), fn]);
  }
  return [...byTakes]
    .map(
      ([takes, fns]) => `${fns.map((fn) => `\`${fn}\` (${FN_SQL[fn]})`).join(', ')} take ${takes}`,
    )
    .join('; ');
}

export function filterHelp(): string {
  return [
    "A condition on the columns: `price gt 10 and category eq 'tea'`, `city eq null`,",
    "`not (status in ('new', 'paid'))`, `contains(name,'tea')`, `startswith(name,'T')`.",
    'Operators `eq ne lt le gt ge`, `and or not`, parentheses; strings in single quotes',
    "(`''` for a quote). Unquoted dates and times: `created_at ge 2024-01-03`,",
    '`created_at lt 2024-01-03T10:00:00.000Z` (`Z` or an offset like `+02:00`, compared in UTC),',
    `\`opens lt 09:30:00\` (TIME columns). Functions on a column, with the MySQL function each runs: ${functionList()};`,
    "e.g. `contains(tolower(name),'tea')`, `year(created_at) eq 2024`. A function on a column cannot",
    'use its index. A date or function on a column of the wrong type is 400 FILTER_TYPE.',
    "Through relations (see `$expand`): a path through to-one relations names a related column (`customer/country eq 'Japan'`);",
    'to-many relations take lambdas: `order_items/any(i: i/qty gt 5)`, `order_items/all(i: i/qty gt 0)`, `order_items/any()`.',
    `Limits: ${MAX_FILTER_BYTES} bytes, ${MAX_NESTING} levels of nesting, ${MAX_IN_VALUES} \`in\` values, ${MAX_PATTERN_CHARS} characters of contains/startswith/endswith patterns in all, ${MAX_FILTER_CALLS} function calls (each contains/startswith/endswith and column function counts one).`,
  ].join(' ');
}
