/**
 * A stored routine's call as one function per kind (docs/routines.md): the arguments planned
 * against the routine (plan/call-plan.ts) → its statements (sql/compile-call.ts) → a CallJob
 * whose rows the row codec writes (types/rows.ts), each result set from its own columns as MySQL
 * describes them (db/result-columns.ts), the OUT values and a function's value from their
 * declared types. The execute stage runs the job (execute/call.ts); the answer's text is made
 * here from what it gave back.
 */
import type { ServerKind } from '../db/pool.js';
import { columnFromField } from '../db/result-columns.js';
import type { RoutineInfo } from '../db/routines.js';
import type { CallJob, CallResult } from '../execute/call.js';
import { type CallPlan, planCallBody, planCallQuery } from '../plan/call-plan.js';
import { compileCall } from '../sql/compile-call.js';
import { type RowSerializer, rowSerializer } from '../types/rows.js';
import { Memo } from './memo.js';

/** Per routine: the serializer of its OUT values' row (one object keyed by parameter name). */
const outSerializers = new Memo<RoutineInfo, RowSerializer | null>((routine) => {
  const columns = routine.parameters.filter((p) => p.mode !== 'in').map((p) => p.column);
  return columns.length === 0 ? null : rowSerializer(columns);
});
/** Per function: the serializer of its value, as the one key `value` of an object. */
const valueSerializers = new Memo<RoutineInfo, RowSerializer>((routine) =>
  // returns is named `value` (db/routines.ts): its row is `{"value": …}`.
  rowSerializer(routine.returns === null ? [] : [routine.returns]),
);

function outRowOf(routine: RoutineInfo): RowSerializer | null {
  return outSerializers.of(routine);
}

function valueRowOf(routine: RoutineInfo): RowSerializer {
  return valueSerializers.of(routine);
}

/** Where a call runs: the served database, and the server's flavour (db/result-columns.ts). */
export interface CallTarget {
  readonly database: string;
  readonly flavour: ServerKind['flavour'];
}

/** A function's arguments: a POST's JSON body, or a GET's query string. */
export type FunctionArguments =
  | { readonly body: unknown }
  | { readonly query: Readonly<Record<string, string | string[] | undefined>> };

/** `POST /rpc/<procedure>`: every result set as its columns say, then the OUT values. */
export function procedureJob(target: CallTarget, routine: RoutineInfo, body: unknown): CallJob {
  const plan = planCallBody(routine, body);
  return {
    statements: compileCall(target.database, routine, plan.inputs),
    resultSet: (fields) =>
      rowSerializer(fields.map((field) => columnFromField(field, target.flavour))),
    outRow: outRowOf(routine),
  };
}

/** `GET` or `POST /rpc/<function>`: its one value, as its declared return type says. */
export function functionJob(
  target: CallTarget,
  routine: RoutineInfo,
  given: FunctionArguments,
): CallJob {
  const plan: CallPlan =
    'query' in given ? planCallQuery(routine, given.query) : planCallBody(routine, given.body);
  const value = valueRowOf(routine);
  return {
    statements: compileCall(target.database, routine, plan.inputs),
    resultSet: () => value,
    outRow: null,
  };
}

/** `{"success":true,"results":[[row,…],…],"out":{…}}` */
export function procedureAnswer(result: CallResult): string {
  const sets = result.sets.map((rows) => `[${rows.join(',')}]`).join(',');
  return `{"success":true,"results":[${sets}],"out":${result.out ?? '{}'}}`;
}

/** `{"success":true,"value":…}`: the function's one row is `{"value":…}` already. */
export function functionAnswer(result: CallResult): string {
  const row = result.sets[0]?.[0];
  return row === undefined ? '{"success":true,"value":null}' : `{"success":true,${row.slice(1)}`;
}
