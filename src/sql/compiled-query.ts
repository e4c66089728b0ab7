/** SQL text and its bound parameters, as every compiler returns them. */
export interface CompiledQuery {
  readonly sql: string;
  readonly params: readonly unknown[];
}
