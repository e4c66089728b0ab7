/**
 * A routine call → its statements (docs/routines.md). IN values are bound to the CALL's
 * placeholders; OUT and INOUT parameters go through session variables named by position
 * (`@tablegate_p2`), the INOUT ones set first, since a CALL can hand an OUT parameter back only
 * into a variable and the pool runs one statement at a time (no multipleStatements). A SELECT of
 * a variable says nothing of the parameter's declared type, so each comes back CAST to it where
 * the value's form depends on it (DECIMAL's digits, a DATETIME(n)'s fraction, binary bytes).
 * The routine is named with its database, as MySQL resolves a function that shares a built-in's
 * name (`now`) only when qualified. Names are the schema's (db/routines.ts), values only `?`.
 */
import type { RoutineInfo } from '../db/routines.js';
import type { ColumnInfo } from '../db/schema-types.js';
import { COLUMN_KINDS } from '../types/kinds.js';
import type { WriteParam } from '../types/value-codec.js';
import type { CompiledCall } from './compiled-query.js';
import { quoteIdent } from './quote.js';

/** The session variable of the parameter at `position` (1-based). */
export function outVariable(position: number): string {
  return `@tablegate_p${position}`;
}

/** The CAST target that gives a variable back in its parameter's type (types/kinds.ts); null: as it is. */
export function castTarget(column: ColumnInfo): string | null {
  return COLUMN_KINDS[column.kind].castTarget(column);
}

/**
 * The statements of a call of `routine` in `database` with `inputs`: one value per IN and
 * INOUT parameter, in declaration order (plan/call-plan.ts).
 */
export function compileCall(
  database: string,
  routine: RoutineInfo,
  inputs: readonly WriteParam[],
): CompiledCall {
  const name = `${quoteIdent(database)}.${quoteIdent(routine.name)}`;
  const args: string[] = [];
  const params: WriteParam[] = [];
  const seeds: string[] = [];
  const seedParams: WriteParam[] = [];
  const reads: string[] = [];
  const cleared: string[] = [];
  let next = 0;
  routine.parameters.forEach((parameter, index) => {
    const variable = outVariable(index + 1);
    if (parameter.mode === 'in') {
      args.push('?');
      params.push(inputs[next++] ?? null);
      return;
    }
    if (parameter.mode === 'inout') {
      seeds.push(`${variable} = ?`);
      seedParams.push(inputs[next++] ?? null);
    }
    args.push(variable);
    const target = castTarget(parameter.column);
    reads.push(target === null ? variable : `CAST(${variable} AS ${target})`);
    cleared.push(`${variable} = NULL`);
  });
  const call = `${routine.kind === 'procedure' ? 'CALL' : 'SELECT'} ${name}(${args.join(', ')})`;
  return {
    seed: seeds.length === 0 ? null : { sql: `SET ${seeds.join(', ')}`, params: seedParams },
    call: { sql: call, params },
    outs: reads.length === 0 ? null : { sql: `SELECT ${reads.join(', ')}`, params: [] },
    clear: cleared.length === 0 ? null : { sql: `SET ${cleared.join(', ')}`, params: [] },
  };
}
