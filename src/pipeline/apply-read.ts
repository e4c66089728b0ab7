/**
 * A read with `$apply` (docs/totals.md) as the CompiledRead every read route takes
 * (pipeline/read.ts): its statement and `$count` (sql/compile-apply.ts), whether it is small
 * enough to fetch whole, and the serializer of its answer objects: each value written as its
 * column's (a computed value and an aggregate as what MySQL gives for it: plan/apply-types.ts),
 * the values through a relation as a nested object (types/rows.ts).
 */
import { tablesOf } from '../cache/read-tables.js';
import type { ColumnInfo } from '../db/schema-types.js';
import type { Flavour } from '../execute/database.js';
import type { ApplyOutput, ApplyPlan } from '../plan/apply.js';
import { applyCost } from '../plan/read-cost.js';
import { isSmallApply } from '../plan/small-read.js';
import { compileApply, compileApplyCount } from '../sql/compile-apply.js';
import { namesUser } from '../sql/user-values.js';
import { type Field, type RowSerializer, shapeSerializer } from '../types/rows.js';
import type { CompiledRead } from './compiled-read.js';
import { Memo } from './memo.js';

export function compileApplyPlan(plan: ApplyPlan, flavour: Flavour = 'mariadb'): CompiledRead {
  const count = plan.count ? compileApplyCount(plan, flavour) : null;
  const select = compileApply(plan, flavour);
  return {
    select,
    count,
    serialize: serializerOf(plan.outputs),
    small: isSmallApply(plan),
    namesUser: namesUser(select.params) || (count !== null && namesUser(count.params)),
    fields: fieldsOf(plan.outputs),
    // Groups are paged by $top and $skip alone: no Link to a next page.
    page: null,
    cost: applyCost(plan),
    // Groups: as many as the table's rows at most, no estimate of how many.
    rows: 0,
    tables: tablesOf(plan),
  };
}

function fieldsOf(outputs: readonly ApplyOutput[]): Field[] {
  return outputs.map((output): Field => {
    if (output.kind === 'nested') {
      return { kind: 'nested', name: output.name, fields: fieldsOf(output.outputs) };
    }
    return { kind: 'value', name: output.name, column: output.result };
  });
}

/**
 * Serializers by the shape of the answer (names, nesting, and the very ColumnInfo each value is
 * written as), so two compiles of one shape share one: the read-shape cache compares them.
 */
const serializers = new Map<string, RowSerializer>();
const MAX_SERIALIZERS = 256;
let nextColumnId = 0;
/** A number per column object, for the shape key (an object's identity as text). */
const columnIds = new Memo<ColumnInfo, number>(() => nextColumnId++);

function serializerOf(outputs: readonly ApplyOutput[]): RowSerializer {
  const key = shapeKey(outputs);
  let serializer = serializers.get(key);
  if (serializer === undefined) {
    if (serializers.size >= MAX_SERIALIZERS) serializers.clear();
    serializer = shapeSerializer(fieldsOf(outputs));
    serializers.set(key, serializer);
  }
  return serializer;
}

function shapeKey(outputs: readonly ApplyOutput[]): string {
  return JSON.stringify(
    outputs.map((output) =>
      output.kind === 'nested'
        ? [output.name, shapeKey(output.outputs)]
        : [output.name, idOf(output.result)],
    ),
  );
}

function idOf(column: ColumnInfo): number {
  return columnIds.of(column);
}
