/** SQL text and its bound parameters, as every compiler returns them. */
export interface CompiledQuery {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/**
 * A stored routine's call (sql/compile-call.ts), as the execute stage runs it (execute/call.ts):
 * the INOUT values set first, the call, the OUT values read back, their variables emptied.
 */
export interface CompiledCall {
  /** `SET @tablegate_p2 = ?, …`: the INOUT values, before the call; null when there are none. */
  readonly seed: CompiledQuery | null;
  /** `CALL db.p(?, @tablegate_p2)`, or a function's `SELECT db.f(?, ?)`. */
  readonly call: CompiledQuery;
  /** `SELECT CAST(@tablegate_p2 AS …), …`: the OUT and INOUT values; null when there are none. */
  readonly outs: CompiledQuery | null;
  /** `SET @tablegate_p2 = NULL, …`: emptied, so no later call on the connection sees them. */
  readonly clear: CompiledQuery | null;
}
