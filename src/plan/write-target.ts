/**
 * The `$filter` of `update?$filter=…` and `delete?$filter=…` against the table a caller may name
 * (policy/views.ts readView: a hidden column is unknown, as in a read): the read's filter
 * language on the table's own columns. Paths and lambdas are refused: an UPDATE or DELETE names
 * one table, and MySQL refuses a subquery that reads the table it changes. Knows no SQL.
 */
import type { TableInfo } from '../db/schema-types.js';
import { invalidQuery } from '../errors.js';
import type { FilterExpr } from '../query/ast.js';
import { visitFilterColumns } from '../query/visit.js';
import type { PlannedFilter } from './nodes.js';
import { rootSource, Scope } from './scope.js';
import { fullView } from './view.js';

export function planWriteFilter(table: TableInfo, filter: FilterExpr): PlannedFilter {
  const related = (what: string): never => {
    throw invalidQuery(
      `The $filter of an update or delete names columns of table '${table.name}' only, not ${what}; read the rows with $expand or a lambda first, then change them by key`,
    );
  };
  visitFilterColumns(filter, {
    column: (ref) => {
      if (ref.path !== undefined) related(`'${[...ref.path, ref.name].join('/')}'`);
    },
    lambda: (lambda) => related(`${lambda.path.join('/')}/${lambda.op}()`),
  });
  return Scope.filterOn(filter, rootSource(table), fullView(table));
}
