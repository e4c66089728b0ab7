/**
 * The only way a name enters SQL text. Callers pass names that the plan stage has already
 * resolved against the schema cache; quoting is the second line of defence, not the first.
 */

/** Backtick-quotes a MySQL identifier, doubling any backtick inside it. */
export function quoteIdent(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}
