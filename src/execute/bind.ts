/**
 * Compiled parameters → what mysql2's `execute` takes. Our compilers bind only strings, numbers,
 * Buffers and null; mysql2's parameter type is a wider union it does not export, hence the cast,
 * made here once.
 */
export function bind(params: readonly unknown[]): never[] {
  return params as never[];
}
